// What a rank says of its progress, cheaply and all the time: the last collective it entered and
// the last it completed, what that call was, and where it waits. Each rank publishes it with its
// heartbeat (one store write a period, the write the heartbeat makes anyway), so that a rank that
// times out can read every rank's and name the culprit: the rank that never entered the call, or
// the one that entered a different call at the same sequence number (hang_diagnosis.hpp), and
// `tiercc-info --job` can show a live job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/names.hpp"
#include "tiercc/types.hpp"

namespace tiercc {

/// What every rank of a collective must call alike: kind, count, type, op and root.
struct CallSignature {
  Collective coll = Collective::Barrier;
  std::size_t count = 0;
  DataType dt = DataType::U8;
  ReduceOp op = ReduceOp::Sum;
  int root = -1;

  /// The fields that take part in `coll` (a barrier has none; only reductions have an op).
  bool matches(const CallSignature& other) const;
  /// "allreduce #10 (1024 x f32, sum)", "broadcast #3 (16 x i32, root 0)", "barrier #7".
  std::string describe(std::int64_t seq) const;
};

/// Where an operation is: the flight recorder's states.
enum class OpState : std::uint8_t { Queued, Running, Done, Failed };
const char* toString(OpState s);

struct Progress {
  std::int64_t entered = -1;          ///< sequence number of the last collective entered, -1: none yet
  std::int64_t completed = -1;        ///< ... and of the last one completed
  std::int64_t completedAtMs = 0;     ///< wall clock (ms since the epoch) when it completed; 0: never
  CallSignature current;              ///< the call `entered` names
  OpState state = OpState::Done;      ///< of that call
  std::uint32_t step = 0, steps = 0;  ///< the plan step it runs, of how many
  int waitingOn = -1;                 ///< the rank it waits on, -1: none
  Tier waitTier = Tier::ScaleUp;

  std::int64_t publishedAtMs = 0;  ///< wall clock when the rank wrote this (its last beat)
  bool hasLeft = false;            ///< said goodbye: its communicator is destroyed

  /// The progress of a rank that has left.
  static Progress left() {
    Progress p;
    p.hasLeft = true;
    return p;
  }
  /// One line of text, no spaces inside fields: what the heartbeat carries after its count.
  std::string encode() const;
  /// The inverse of encode; nullopt for text that is not a progress line.
  static std::optional<Progress> decode(const std::string& text);
};

/// Wall-clock milliseconds since the epoch (ranks on different hosts compare them: NTP-close).
std::int64_t wallClockMs();

}  // namespace tiercc
