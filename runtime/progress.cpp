// Progress lines (see progress.hpp): "e=10 c=9 t=1764650000123 s=1 k=0 n=1024 d=0 o=0 r=-1
// st=2/6 w=5 wt=1 p=1764650004950", enums as their numbers so that a line decodes the same on
// every build.
#include "runtime/progress.hpp"

#include <chrono>
#include <cstdio>

#include "core/errors.hpp"

namespace tiercc {

bool CallSignature::matches(const CallSignature& o) const {
  if (coll != o.coll) return false;
  using C = Collective;
  if (coll == C::Barrier) return true;
  const bool reduces = coll == C::AllReduce || coll == C::ReduceScatter || coll == C::Reduce;
  const bool rooted = coll == C::Broadcast || coll == C::Reduce;
  // An all-to-allv's counts differ per rank by design: its type must agree, not its count.
  return (coll == C::AllToAllv || count == o.count) && dt == o.dt && (!reduces || op == o.op) &&
         (!rooted || root == o.root);
}

std::string CallSignature::describe(std::int64_t seq) const {
  using C = Collective;
  std::string out = concat(toString(coll), " #", seq);
  if (coll == C::Barrier) return out;
  if (coll == C::AllToAllv) return concat(out, " (", toString(dt), ")");
  out += concat(" (", count, " x ", toString(dt));
  if (coll == C::AllReduce || coll == C::ReduceScatter || coll == C::Reduce) out += concat(", ", toString(op));
  if (coll == C::Broadcast || coll == C::Reduce) out += concat(", root ", root);
  return out + ")";
}

const char* toString(OpState s) {
  switch (s) {
    case OpState::Queued:
      return "queued";
    case OpState::Running:
      return "running";
    case OpState::Done:
      return "done";
    case OpState::Failed:
      return "failed";
  }
  return "unknown";
}

std::string Progress::encode() const {
  char line[256];
  std::snprintf(line, sizeof(line), "e=%lld c=%lld t=%lld s=%d k=%d n=%zu d=%d o=%d r=%d st=%u/%u w=%d wt=%d p=%lld",
                static_cast<long long>(entered), static_cast<long long>(completed),
                static_cast<long long>(completedAtMs), static_cast<int>(state), static_cast<int>(current.coll),
                current.count, static_cast<int>(current.dt), static_cast<int>(current.op), current.root, step, steps,
                waitingOn, static_cast<int>(waitTier), static_cast<long long>(publishedAtMs));
  return line;
}

std::optional<Progress> Progress::decode(const std::string& text) {
  Progress p;
  long long e = 0, c = 0, t = 0, published = 0;
  int s = 0, k = 0, d = 0, o = 0, wt = 0;
  std::size_t n = 0;
  if (std::sscanf(text.c_str(), "e=%lld c=%lld t=%lld s=%d k=%d n=%zu d=%d o=%d r=%d st=%u/%u w=%d wt=%d p=%lld", &e,
                  &c, &t, &s, &k, &n, &d, &o, &p.current.root, &p.step, &p.steps, &p.waitingOn, &wt, &published) != 14)
    return std::nullopt;
  if (s < 0 || s > 3 || k < 0 || k >= kNumCollectives || d < 0 || d >= kNumDataTypes || o < 0 || o >= kNumReduceOps ||
      wt < 0 || wt > 1)
    return std::nullopt;
  p.entered = e;
  p.completed = c;
  p.completedAtMs = t;
  p.publishedAtMs = published;
  p.state = static_cast<OpState>(s);
  p.current.coll = static_cast<Collective>(k);
  p.current.count = n;
  p.current.dt = static_cast<DataType>(d);
  p.current.op = static_cast<ReduceOp>(o);
  p.waitTier = static_cast<Tier>(wt);
  return p;
}

std::int64_t wallClockMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace tiercc
