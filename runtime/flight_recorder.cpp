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

// A call's enums and an operation's state in one word: coll | dt << 8 | op << 16 | state << 24.
std::uint64_t packCall(const CallSignature& c, OpState state) {
  return static_cast<std::uint64_t>(c.coll) | static_cast<std::uint64_t>(c.dt) << 8 |
         static_cast<std::uint64_t>(c.op) << 16 | static_cast<std::uint64_t>(state) << 24;
}
CallSignature unpackCall(std::uint64_t word, std::size_t count, std::int64_t root, OpState& state) {
  state = static_cast<OpState>((word >> 24) & 0xff);
  return {static_cast<Collective>(word & 0xff), count, static_cast<DataType>((word >> 8) & 0xff),
          static_cast<ReduceOp>((word >> 16) & 0xff), static_cast<int>(root)};
}
constexpr std::uint64_t kStateMask = std::uint64_t(0xff) << 24;
constexpr auto kRelaxed = std::memory_order_relaxed;

FlightRecorder::FlightRecorder(std::size_t capacity)
    : capacity_(capacity),
      ring_(capacity ? std::make_unique<Slot[]>(capacity) : nullptr),
      nextSlot_(capacity ? 1 % capacity : 0),
      originTicks_(cycles::now()),
      originWallMs_(wallClockMs()) {
  collectives_.call.store(packCall({}, OpState::Done), kRelaxed);
}

std::int64_t FlightRecorder::wallMs(std::uint64_t ticks) const {
  if (ticks == 0) return 0;
  const double ms = (static_cast<double>(ticks) - static_cast<double>(originTicks_)) * cycles::secondsPerTick() * 1e3;
  return originWallMs_ + static_cast<std::int64_t>(ms);
}

FlightRecorder::Entry FlightRecorder::Slot::read() const {
  return lock.read([&] {
    Entry e;
    e.id = id.load(kRelaxed);
    e.seq = seq.load(kRelaxed);
    e.call = unpackCall(call.load(kRelaxed), count.load(kRelaxed), root.load(kRelaxed), e.state);
    e.peer = static_cast<int>(peer.load(kRelaxed));
    e.step = step.load(kRelaxed);
    e.plan = plan.load(kRelaxed);
    e.queuedAt = queuedAt.load(kRelaxed);
    e.startedAt = startedAt.load(kRelaxed);
    e.endedAt = endedAt.load(kRelaxed);
    return e;
  });
}

std::uint64_t FlightRecorder::began(std::uint64_t seq, const CallArgs& args, std::uint64_t queuedAt,
                                    std::uint64_t startedAt) {
  live_.step.store(0, kRelaxed);
  live_.plan.store(nullptr, kRelaxed);
  live_.done();
  const std::uint64_t id = nextId_.load(kRelaxed);
  const CallSignature call = signatureOf(args);
  const std::uint64_t packed = packCall(call, OpState::Running);
  collectiveRunning_ = isCollective(args.coll);
  if (collectiveRunning_) {
    Collectives& c = collectives_;
    c.lock.beginWrite();
    c.entered.store(static_cast<std::int64_t>(seq), kRelaxed);
    c.call.store(packed, kRelaxed);
    c.count.store(call.count, kRelaxed);
    c.root.store(call.root, kRelaxed);
    c.lock.endWrite();
  }
  if (capacity_) {
    Slot& s = ring_[nextSlot_];
    nextSlot_ = nextSlot_ + 1 == capacity_ ? 0 : nextSlot_ + 1;  // no division on the hot path
    s.lock.beginWrite();
    s.id.store(id, kRelaxed);
    s.seq.store(seq, kRelaxed);
    s.call.store(packed, kRelaxed);
    s.count.store(call.count, kRelaxed);
    s.root.store(call.root, kRelaxed);
    s.peer.store(collectiveRunning_ ? -1 : args.peer, kRelaxed);
    s.step.store(0, kRelaxed);
    s.plan.store(nullptr, kRelaxed);
    s.queuedAt.store(queuedAt, kRelaxed);
    s.startedAt.store(startedAt, kRelaxed);
    s.endedAt.store(0, kRelaxed);
    s.lock.endWrite();
    running_ = &s;
  }
  runningId_ = id;
  nextId_.store(id + 1, std::memory_order_release);
  return id;
}

void FlightRecorder::ended(std::uint64_t id, bool ok, std::uint64_t endedAt) {
  if (id != runningId_) return;
  const std::uint64_t state = static_cast<std::uint64_t>(ok ? OpState::Done : OpState::Failed) << 24;
  if (collectiveRunning_) {
    Collectives& c = collectives_;
    c.lock.beginWrite();
    c.call.store((c.call.load(kRelaxed) & ~kStateMask) | state, kRelaxed);
    if (ok) {
      c.completed.store(c.entered.load(kRelaxed), kRelaxed);
      c.completedAt.store(endedAt, kRelaxed);
    }
    c.lock.endWrite();
    collectiveRunning_ = false;
  }
  if (Slot* s = running_) {
    s->lock.beginWrite();
    s->call.store((s->call.load(kRelaxed) & ~kStateMask) | state, kRelaxed);
    s->step.store(live_.step.load(kRelaxed), kRelaxed);
    s->plan.store(live_.plan.load(kRelaxed), kRelaxed);
    s->endedAt.store(endedAt, kRelaxed);
    s->lock.endWrite();
    running_ = nullptr;
  }
  live_.done();
}

Progress FlightRecorder::progress() const {
  Progress p;
  const Collectives& c = collectives_;
  c.lock.read([&] {
    p.entered = c.entered.load(kRelaxed);
    p.completed = c.completed.load(kRelaxed);
    p.completedAtMs = static_cast<std::int64_t>(c.completedAt.load(kRelaxed));  // ticks, converted below
    p.current = unpackCall(c.call.load(kRelaxed), c.count.load(kRelaxed), c.root.load(kRelaxed), p.state);
    return 0;
  });
  p.completedAtMs = wallMs(static_cast<std::uint64_t>(p.completedAtMs));
  p.publishedAtMs = wallClockMs();
  p.step = live_.step.load(kRelaxed);
  if (const Plan* plan = live_.plan.load(std::memory_order_acquire)) p.steps = static_cast<std::uint32_t>(plan->steps.size());
  if (p.state == OpState::Running) {
    p.waitingOn = live_.waitingOn.load(kRelaxed);
    p.waitTier = static_cast<Tier>(live_.waitTier.load(kRelaxed));
  }
  return p;
}

std::string FlightRecorder::json(const Topology& topo, const std::string& comm, const std::string& reason,
                                 const std::vector<QueuedCall>& queued) const {
  std::string out =
      concat("{\"rank\":", topo.rank(), ",\"size\":", topo.size(), ",\"domain\":", topo.domain(),
             ",\"local_rank\":", topo.localRank(), ",\"communicator\":", quoted(comm), ",\"reason\":", quoted(reason),
             ",\"dumped_at_ms\":", wallClockMs(), ",\"capacity\":", capacity_, ",\"entries\":[");
  bool first = true;
  auto entry = [&](std::uint64_t seq, const CallSignature& call, int peer, OpState state) {
    out += first ? "" : ",";
    first = false;
    out += concat("{\"seq\":", seq, ",\"kind\":", quoted(toString(call.coll)),
                  ",\"call\":", quoted(call.describe(static_cast<std::int64_t>(seq))), ",\"count\":", call.count,
                  ",\"dtype\":", quoted(toString(call.dt)), ",\"op\":", quoted(toString(call.op)),
                  ",\"root\":", call.root, ",\"peer\":", peer, ",\"state\":", quoted(toString(state)));
  };
  const std::uint64_t next = nextId_.load(std::memory_order_acquire);
  const std::uint64_t oldest = next > capacity_ ? next - capacity_ : 1;
  for (std::uint64_t id = oldest; id < next && capacity_; ++id) {
    const Entry e = ring_[id % capacity_].read();
    if (e.id != id) continue;  // overwritten meanwhile by a newer one
    entry(e.seq, e.call, e.peer, e.state);
    // The live step and wait belong to the running entry; they may be one step ahead of it.
    const bool running = e.state == OpState::Running;
    const Plan* plan = running ? live_.plan.load(std::memory_order_acquire) : e.plan;
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
