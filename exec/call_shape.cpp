// The shape of a call, as the ranks compare it (see call_shape.hpp).
#include "exec/call_shape.hpp"

#include "core/errors.hpp"
#include "exec/call.hpp"

namespace tiercc {

CallShape shapeOf(const Plan& plan, const CallArgs& args) {
  using C = Collective;
  const C c = plan.coll;
  const bool reduces = c == C::AllReduce || c == C::ReduceScatter || c == C::Reduce;
  const bool rooted = c == C::Broadcast || c == C::Reduce;
  return {plan.bytes, static_cast<int>(c), static_cast<int>(args.dt), reduces ? static_cast<int>(args.op) : -1,
          rooted ? args.root : -1};
}

std::string describe(const CallShape& s) {
  std::string d = concat(toString(static_cast<Collective>(s.coll)), " of ", s.bytes, " bytes of ",
                         toString(static_cast<DataType>(s.dt)));
  if (s.op >= 0) d += concat(", op ", toString(static_cast<ReduceOp>(s.op)));
  if (s.root >= 0) d += concat(", root ", s.root);
  return d;
}

// FNV-1a over the fields, then a finaliser that spreads them over every bit (the tags take 16).
std::uint64_t fingerprint(const CallShape& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  mix(s.bytes);
  mix(static_cast<std::uint32_t>(s.coll));
  mix(static_cast<std::uint32_t>(s.dt));
  mix(static_cast<std::uint32_t>(s.op));
  mix(static_cast<std::uint32_t>(s.root));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h ? h : 1;
}

}  // namespace tiercc
