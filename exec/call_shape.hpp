// What every rank must pass alike for one collective call (count, datatype, op, root), as the
// ranks compare it: in the direct paths' descriptors (exec/direct.hpp), in the stamp each rank
// leaves in its mailbox (exec/call_stamp.hpp), and folded into the tags of its messages.
#pragma once

#include <cstdint>
#include <string>

namespace tiercc {

struct CallArgs;
struct Plan;

struct CallShape {
  std::uint64_t bytes = 0;  ///< the call's size column
  std::int32_t coll = 0;    ///< Collective
  std::int32_t dt = 0;      ///< DataType
  std::int32_t op = -1;     ///< ReduceOp; -1 for collectives without one
  std::int32_t root = -1;   ///< global rank; -1 for collectives without one
  bool operator==(const CallShape&) const = default;
};

/// The shape of a call to `plan` with `args`: what the collective uses of them.
CallShape shapeOf(const Plan& plan, const CallArgs& args);
/// "allreduce of 4096 bytes of f32, op sum".
std::string describe(const CallShape& shape);
/// A hash of the shape, never 0 (0 marks a stamp never written).
std::uint64_t fingerprint(const CallShape& shape);

}  // namespace tiercc
