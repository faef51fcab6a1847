// The flight recorder's ring and its JSON (see flight_recorder.hpp).
#include "runtime/flight_recorder.hpp"

#include <cstdio>

#include "core/cycle_clock.hpp"
#include "core/errors.hpp"

namespace tiercc {
namespace {

/// `s` as a JSON string literal.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", c);
      out += esc;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

bool isCollective(Collective c) { return c != Collective::Send && c != Collective::Recv; }

}  // namespace

CallSignature signatureOf(const CallArgs& a) {
  using C = Collective;
  CallSignature s;
  s.coll = a.coll;
  s.count = a.coll == C::Barrier || a.coll == C::AllToAllv ? 0 : a.count;
  s.dt = a.coll == C::Barrier ? DataType::U8 : a.dt;
  const bool reduces = a.coll == C::AllReduce || a.coll == C::ReduceScatter || a.coll == C::Reduce;
  s.op = reduces ? a.op : ReduceOp::Sum;
  s.root = a.coll == C::Broadcast || a.coll == C::Reduce ? a.root : -1;
  return s;
}

FlightRecorder::FlightRecorder(std::size_t capacity)
    : capacity_(capacity),
      ring_(capacity ? std::make_unique<SeqLocked<Entry>[]>(capacity) : nullptr),
      originTicks_(cycles::now()),
      originWallMs_(wallClockMs()) {}

std::int64_t FlightRecorder::wallMs(std::uint64_t ticks) const {
  if (ticks == 0) return 0;
  const double ms = (static_cast<double>(ticks) - static_cast<double>(originTicks_)) * cycles::secondsPerTick() * 1e3;
  return originWallMs_ + static_cast<std::int64_t>(ms);
}

std::uint64_t FlightRecorder::began(std::uint64_t seq, const CallArgs& args, std::uint64_t queuedAt,
                                    std::uint64_t startedAt) {
  live_.step.store(0, std::memory_order_relaxed);
  live_.plan.store(nullptr, std::memory_order_relaxed);
  live_.done();
  const std::uint64_t id = nextId_.load(std::memory_order_relaxed);
  const CallSignature call = signatureOf(args);
  if (isCollective(args.coll)) {
    collectives_.entered = static_cast<std::int64_t>(seq);
    collectives_.current = call;
    collectives_.state = OpState::Running;
    published_.store(collectives_);
  }
  if (capacity_) {
    running_ = Entry{.id = id,
                     .seq = seq,
                     .call = call,
                     .peer = isCollective(args.coll) ? -1 : args.peer,
                     .queuedAt = queuedAt,
                     .startedAt = startedAt};
    ring_[id % capacity_].store(running_);
  }
  nextId_.store(id + 1, std::memory_order_release);
  return id;
}

void FlightRecorder::ended(std::uint64_t id, bool ok, std::uint64_t endedAt) {
  const OpState state = ok ? OpState::Done : OpState::Failed;
  // Operations run one at a time: a collective still running is the one ending.
  if (collectives_.state == OpState::Running) {
    collectives_.state = state;
    if (ok) {
      collectives_.completed = collectives_.entered;
      collectives_.completedAt = endedAt;
    }
    published_.store(collectives_);
  }
  if (capacity_ && running_.id == id) {
    running_.state = state;
    running_.step = live_.step.load(std::memory_order_relaxed);
    running_.plan = live_.plan.load(std::memory_order_relaxed);
    running_.endedAt = endedAt;
    ring_[id % capacity_].store(running_);
  }
  live_.done();
}

Progress FlightRecorder::progress() const {
  const Collectives c = published_.load();
  Progress p;
  p.entered = c.entered;
  p.completed = c.completed;
  p.completedAtMs = wallMs(c.completedAt);
  p.current = c.current;
  p.state = c.state;
  p.publishedAtMs = wallClockMs();
  p.step = live_.step.load(std::memory_order_relaxed);
  if (const Plan* plan = live_.plan.load(std::memory_order_relaxed))
    p.steps = static_cast<std::uint32_t>(plan->steps.size());
  if (p.state == OpState::Running) {
    p.waitingOn = live_.waitingOn.load(std::memory_order_relaxed);
    p.waitTier = static_cast<Tier>(live_.waitTier.load(std::memory_order_relaxed));
  }
  return p;
}

std::string FlightRecorder::json(const Topology& topo, const std::string& comm, const std::string& reason,
                                 const std::vector<QueuedCall>& queued) const {
  std::string out = concat("{\"rank\":", topo.rank(), ",\"size\":", topo.size(), ",\"domain\":", topo.domain(),
                           ",\"local_rank\":", topo.localRank(), ",\"communicator\":", quoted(comm),
                           ",\"reason\":", quoted(reason), ",\"dumped_at_ms\":", wallClockMs(),
                           ",\"capacity\":", capacity_, ",\"entries\":[");
  bool first = true;
  auto entry = [&](std::uint64_t seq, const CallSignature& call, int peer, OpState state) {
    out += first ? "" : ",";
    first = false;
    out += concat("{\"seq\":", seq, ",\"kind\":", quoted(toString(call.coll)), ",\"call\":",
                  quoted(call.describe(static_cast<std::int64_t>(seq))), ",\"count\":", call.count,
                  ",\"dtype\":", quoted(toString(call.dt)), ",\"op\":", quoted(toString(call.op)),
                  ",\"root\":", call.root, ",\"peer\":", peer, ",\"state\":", quoted(toString(state)));
  };
  const std::uint64_t next = nextId_.load(std::memory_order_acquire);
  const std::uint64_t oldest = next > capacity_ ? next - capacity_ : 1;
  for (std::uint64_t id = oldest; id < next && capacity_; ++id) {
    const Entry e = ring_[id % capacity_].load();
    if (e.id != id) continue;  // overwritten meanwhile by a newer one
    entry(e.seq, e.call, e.peer, e.state);
    // The live step and wait belong to the running entry; they may be one step ahead of it.
    const bool running = e.state == OpState::Running;
    const Plan* plan = running ? live_.plan.load(std::memory_order_relaxed) : e.plan;
    if (plan) {
      const std::uint32_t step = running ? live_.step.load(std::memory_order_relaxed) : e.step;
      out += concat(",\"algorithm\":", quoted(toString(plan->algorithm)), ",\"step\":", step,
                    ",\"steps\":", plan->steps.size());
      if (step < plan->steps.size()) out += concat(",\"step_kind\":", quoted(toString(plan->steps[step].kind)));
    }
    if (running) {
      const int peer = live_.waitingOn.load(std::memory_order_relaxed);
      if (peer >= 0)
        out += concat(",\"waiting_on\":", peer, ",\"waiting_tier\":",
                      quoted(toString(static_cast<Tier>(live_.waitTier.load(std::memory_order_relaxed)))));
    }
    out += concat(",\"queued_ms\":", wallMs(e.queuedAt), ",\"started_ms\":", wallMs(e.startedAt),
                  ",\"ended_ms\":", wallMs(e.endedAt), "}");
  }
  for (const QueuedCall& q : queued) {
    entry(q.seq, q.call, q.peer, OpState::Queued);
    out += concat(",\"queued_ms\":", wallMs(q.queuedAt), "}");
  }
  return out + "]}\n";
}

}  // namespace tiercc
