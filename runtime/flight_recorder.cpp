// The flight recorder's ring and its JSON (see flight_recorder.hpp).
#include "runtime/flight_recorder.hpp"

#include <cstdio>

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

FlightRecorder::FlightRecorder(std::size_t capacity) : ring_(capacity) {}

FlightRecorder::Entry* FlightRecorder::find(std::uint64_t id) {
  if (ring_.empty()) return nullptr;
  Entry& e = ring_[id % ring_.size()];
  return e.id == id ? &e : nullptr;  // overwritten by newer ones when more than N are queued
}

std::uint64_t FlightRecorder::queued(std::uint64_t seq, const CallArgs& args) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t id = nextId_++;
  if (!ring_.empty()) {
    Entry& e = ring_[id % ring_.size()];
    e = Entry{};
    e.id = id;
    e.seq = seq;
    e.call = signatureOf(args);
    e.peer = isCollective(args.coll) ? -1 : args.peer;
    e.queuedMs = wallClockMs();
  }
  return id;  // a collective counts as entered when it starts running, not when it is queued
}

void FlightRecorder::started(std::uint64_t id) {
  live_.step.store(0, std::memory_order_relaxed);
  live_.plan.store(nullptr, std::memory_order_relaxed);
  live_.done();
  std::lock_guard<std::mutex> lock(mutex_);
  Entry* e = find(id);
  if (!e) return;
  e->state = OpState::Running;
  e->startedMs = wallClockMs();
  if (isCollective(e->call.coll)) {
    progress_.entered = static_cast<std::int64_t>(e->seq);
    progress_.current = e->call;
    progress_.state = OpState::Running;
  }
}

void FlightRecorder::ended(std::uint64_t id, bool ok) {
  const std::uint32_t step = live_.step.load(std::memory_order_relaxed);
  const Plan* plan = live_.plan.load(std::memory_order_relaxed);
  live_.done();
  std::lock_guard<std::mutex> lock(mutex_);
  Entry* e = find(id);
  if (!e) return;
  e->state = ok ? OpState::Done : OpState::Failed;
  e->step = step;
  e->plan = plan;
  e->endedMs = wallClockMs();
  if (isCollective(e->call.coll) && static_cast<std::int64_t>(e->seq) == progress_.entered) {
    progress_.state = e->state;
    if (ok) {
      progress_.completed = progress_.entered;
      progress_.completedAtMs = e->endedMs;
    }
  }
}

Progress FlightRecorder::progress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Progress p;
  p.entered = progress_.entered;
  p.completed = progress_.completed;
  p.completedAtMs = progress_.completedAtMs;
  p.current = progress_.current;
  p.state = progress_.state;
  p.step = live_.step.load(std::memory_order_relaxed);
  if (const Plan* plan = live_.plan.load(std::memory_order_relaxed))
    p.steps = static_cast<std::uint32_t>(plan->steps.size());
  if (p.state == OpState::Running) {
    p.waitingOn = live_.waitingOn.load(std::memory_order_relaxed);
    p.waitTier = static_cast<Tier>(live_.waitTier.load(std::memory_order_relaxed));
  }
  return p;
}

std::string FlightRecorder::json(const Topology& topo, const std::string& comm, const std::string& reason) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = concat("{\"rank\":", topo.rank(), ",\"size\":", topo.size(), ",\"domain\":", topo.domain(),
                           ",\"local_rank\":", topo.localRank(), ",\"communicator\":", quoted(comm),
                           ",\"reason\":", quoted(reason), ",\"dumped_at_ms\":", wallClockMs(),
                           ",\"capacity\":", ring_.size(), ",\"entries\":[");
  bool first = true;
  const std::uint64_t oldest = nextId_ > ring_.size() ? nextId_ - ring_.size() : 1;
  for (std::uint64_t id = oldest; id < nextId_ && !ring_.empty(); ++id) {
    const Entry& e = ring_[id % ring_.size()];
    if (e.id != id) continue;
    out += first ? "" : ",";
    first = false;
    out += concat("{\"seq\":", e.seq, ",\"kind\":", quoted(toString(e.call.coll)), ",\"call\":",
                  quoted(e.call.describe(static_cast<std::int64_t>(e.seq))), ",\"count\":", e.call.count,
                  ",\"dtype\":", quoted(toString(e.call.dt)), ",\"op\":", quoted(toString(e.call.op)),
                  ",\"root\":", e.call.root, ",\"peer\":", e.peer, ",\"state\":", quoted(toString(e.state)));
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
    out += concat(",\"queued_ms\":", e.queuedMs, ",\"started_ms\":", e.startedMs, ",\"ended_ms\":", e.endedMs, "}");
  }
  return out + "]}\n";
}

}  // namespace tiercc
