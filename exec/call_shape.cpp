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

// A few multiply-xorshift rounds over the fields packed in three words: cheap enough for every
// call of a 0.2 us allreduce, and every bit of the result depends on every field (tags take 16).
std::uint64_t fingerprint(const CallShape& s) {
  auto mix = [](std::uint64_t h, std::uint64_t v) {
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
  };
  std::uint64_t h = mix(0x6a09e667f3bcc909ull, s.bytes);
  h = mix(h, static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.coll)) << 32 | static_cast<std::uint32_t>(s.dt));
  h = mix(h, static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.op)) << 32 | static_cast<std::uint32_t>(s.root));
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h ? h : 1;
}

}  // namespace tiercc
