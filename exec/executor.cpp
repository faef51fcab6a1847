// The executor (see executor.hpp).
//
// Fragments in flight: each new fragment runs until a step needs one of its posted (rail)
// steps to complete; then the older fragments advance, oldest first, the oldest to its end if
// all slots are taken, the others to their next such wait; the new one advances too only if it
// has a rail step left to post. With two slots this is, for the allreduce: stage and reduce
// fragment j and post its rail reduce-scatter, finish fragment j-1 (its rail allgather, publish,
// gather), then complete fragment j's reduce-scatter and post its allgather; for a plan with one
// rail step (allgather, ...): stage fragment j and post its rail step, then finish fragment j-1,
// while fragment j's transfers are on the wire. Every rank of a domain runs the same steps (a
// rank without a rail part posts nothing, but stops where its rail peers do), and every rank of
// a rail the same plan, so their posts come in the same order, which is how the transport
// matches them.
#include "exec/executor.hpp"

#include <array>

#include "core/cycle_clock.hpp"
#include "core/errors.hpp"
#include "core/reduce.hpp"
#include "exec/call_shape.hpp"
#include "exec/call_stamp.hpp"
#include "exec/steps.hpp"

namespace tiercc {
namespace {

// A call the cost model prices under this is clocked one time in eight: its steps take well
// under a microsecond or two, where two reads of the cycle counter per step cost 3-4% of the call.
constexpr double kAlwaysClockedSeconds = 20e-6;

// How each kind of step runs, in StepKind's order (Agree and Close are the executor's own).
struct StepRunner {
  steps::Fn* run;
  steps::Fn* finish;  // null: run completes the step
};
using namespace steps;
// clang-format off
constexpr std::array<StepRunner, kNumStepKinds> kRunners = {{
    {nullptr, nullptr}, {stage, nullptr}, {domainReduce, nullptr}, {oneShot, nullptr},
    {publish, nullptr}, {domainGather, nullptr}, {nullptr, nullptr},
    {railReducePost, railReduceFinish}, {railCopyPost, railCopyFinish},
    {crossExchangePost, crossExchangeFinish}, {localReduce, nullptr},
    {ringReduceScatter, nullptr}, {ringAllgather, nullptr}, {fold, nullptr}, {halvingReduce, nullptr},
    {doublingGather, nullptr}, {doublingReduce, nullptr}, {unfold, nullptr}, {knomialBroadcast, nullptr},
    {knomialReduce, nullptr}, {bruckAllgather, nullptr}, {bruckRotate, nullptr}, {bruckAlltoall, nullptr},
    {bruckPlace, nullptr}, {pairwise, nullptr}, {dissemination, nullptr},
    {pointToPoint, nullptr}, {pointToPoint, nullptr}}};
// clang-format on

const StepRunner& runnerFor(StepKind kind) { return kRunners[static_cast<int>(kind)]; }

class Pipeline {
 public:
  Pipeline(Call& call, std::uint32_t firstEpoch)
      : c_(call),
        steps_(call.plan.steps),
        firstEpoch_(firstEpoch),
        begin_(call.plan.fragmentSteps.first),
        end_(call.plan.fragmentSteps.second),
        clocked_(call.plan.predictedSeconds >= kAlwaysClockedSeconds || call.ctx.seq % 8 == 0) {}

  void run() {
    // Steps once per call before the fragments; one that posts (the linear all-to-all's cross
    // exchange) completes after them.
    Fragment whole{.count = c_.plan.count};
    std::uint64_t postedOnce = 0;
    for (std::size_t i = 0; i < begin_; ++i)
      if (runOnce(i, whole) && i < 64) postedOnce |= std::uint64_t(1) << i;
    const Plan& plan = c_.plan;
    if (plan.slots > kMaxSlots) fail(ErrorCode::Internal, c_.ctx.what, ": ", plan.slots, " fragments in flight");
    if (plan.slots == 1) {  // one fragment at a time, each to its end
      Fragment f;
      for (std::uint32_t j = 0; j < plan.fragments; ++j) {
        start(f, j);
        segment(f, false, true);
      }
    } else {
      pipelined();
    }
    for (std::size_t i = 0; i < begin_; ++i)
      if (postedOnce >> i & 1) timed(i, -1, true, [&] { runnerFor(steps_[i].kind).finish(c_, steps_[i], whole); });
    for (std::size_t i = end_; i < steps_.size(); ++i) runOnce(i, whole);
  }

 private:
  void pipelined() {
    const Plan& plan = c_.plan;
    std::array<Fragment, kMaxSlots> inflight;
    std::uint32_t oldest = 0, live = 0;  // inflight[(oldest + i) % slots] for i < live, oldest first
    std::size_t postsEnd = begin_;       // one past the last step that posts transfers
    for (std::size_t i = begin_; i < end_; ++i)
      if (runnerFor(steps_[i].kind).finish) postsEnd = i + 1;
    auto at = [&](std::uint32_t i) -> Fragment& { return inflight[(oldest + i) % plan.slots]; };
    // Advances fragment i (see the top of this file); a fragment that is done must be the oldest.
    auto advance = [&](std::uint32_t i, bool resume, bool toEnd) {
      if (!segment(at(i), resume, toEnd)) return false;
      if (i != 0) fail(ErrorCode::Internal, c_.ctx.what, ": fragment ", at(i).index, " ended before an older one");
      oldest = (oldest + 1) % plan.slots;
      --live;
      return true;
    };
    for (std::uint32_t j = 0; j < plan.fragments; ++j) {
      start(at(live++), j);
      if (advance(live - 1, false, false)) continue;
      for (std::uint32_t i = 0; i < live;) {
        const bool toEnd = i == 0 && live == plan.slots;
        if (i == live - 1 && !toEnd && at(i).next >= postsEnd) break;  // the newest: nothing left to post
        if (!advance(i, true, toEnd)) ++i;
      }
    }
    while (live > 0) advance(0, true, true);
  }

  void start(Fragment& f, std::uint32_t index) {
    const Plan& plan = c_.plan;
    const std::size_t offset = static_cast<std::size_t>(index) * plan.fragmentCount;
    f = Fragment{.index = index,
                 .offset = offset,
                 .count = std::min(plan.fragmentCount, plan.count - offset),
                 .slot = index % plan.slots,
                 .next = begin_};  // epoch and posted: 0
    // Per fragment, the first round waits for everything before the call, later ones for their slot.
    if (plan.rounds == Rounds::PerFragment) f.epoch = beginRound(c_.ctx, index == 0 ? 1 : plan.slots);
    if (plan.rounds == Rounds::Direct) {
      f.epoch = firstEpoch_ + index;
      c_.ctx.renewDeadline();
    }
  }

  // Runs f's steps in order until one depends on a step still posted: there it stops, unless
  // `resume` (it waits once, for what it stopped on) or `toEnd` (it waits whenever it must).
  // Returns true when f is done.
  [[gnu::always_inline]] bool segment(Fragment& f, bool resume, bool toEnd) {
    while (f.next < end_) {
      const Step& st = steps_[f.next];
      const std::uint64_t blocking = f.next < 64 ? st.after & f.posted : f.posted;
      if (blocking) {
        if (!resume && !toEnd) return false;
        finish(f, blocking);
        resume = false;
      }
      runStep(f, f.next);
      ++f.next;
    }
    if (f.posted) {
      if (!resume && !toEnd) return false;
      finish(f, f.posted);
    }
    if (c_.plan.rounds == Rounds::PerFragment) endRound(c_.ctx, f.epoch);
    return true;
  }

  [[gnu::always_inline]] void runStep(Fragment& f, std::size_t i) {
    const StepRunner& runner = runnerFor(steps_[i].kind);
    timed(i, static_cast<std::int32_t>(f.index), false, [&] { runner.run(c_, steps_[i], f); });
    if (runner.finish) f.posted |= std::uint64_t(1) << (i < 64 ? i : 63);
  }

  void finish(Fragment& f, std::uint64_t mask) {
    for (std::size_t i = begin_; i < end_ && mask; ++i) {
      const std::uint64_t bit = std::uint64_t(1) << (i < 64 ? i : 63);
      if (!(mask & bit)) continue;
      timed(i, static_cast<std::int32_t>(f.index), true, [&] { runnerFor(steps_[i].kind).finish(c_, steps_[i], f); });
      f.posted &= ~bit;
      mask &= ~bit;
    }
  }

  // Runs once-per-call step i on the whole call; true if it posted transfers to finish later.
  bool runOnce(std::size_t i, Fragment& whole) {
    const StepKind kind = steps_[i].kind;
    if (kind == StepKind::Agree) return false;  // the executor agreed before running the plan
    timed(i, -1, false, [&] {
      if (kind == StepKind::Close) return c_.state.direct.close();
      runnerFor(kind).run(c_, steps_[i], whole);
    });
    return runnerFor(kind).finish != nullptr;
  }

  // Runs one part of step i (of `fragment`, -1: the whole call; `wait`: completing what it
  // posted), counting into the step's counts, and into the trace when there is one.
  template <class F>
  void timed(std::size_t i, std::int32_t fragment, bool wait, F&& f) {
    StepCount& counts = c_.ctx.stats.steps[i];
    c_.ctx.current = &counts;
    c_.step = i;
    if (c_.ctx.live) c_.ctx.live->step.store(static_cast<std::uint32_t>(i), std::memory_order_relaxed);
    if (c_.ctx.fault) [[unlikely]]
      c_.ctx.fault->reached(c_.ctx.seq, i, false, c_.ctx.what);
    if (StepTrace* trace = c_.ctx.trace) [[unlikely]] {
      const std::uint64_t up = counts.scaleUpBytes, out = counts.scaleOutBytes;
      const std::int64_t begin = StepTrace::now();
      const std::uint64_t ticks = clocked_ ? cycles::now() : 0;
      f();
      if (clocked_) counts.ticks += cycles::now() - ticks;
      trace->spans.push_back({static_cast<std::uint32_t>(i), fragment, wait, begin, StepTrace::now(),
                              counts.scaleUpBytes - up, counts.scaleOutBytes - out});
      return;
    }
    if (!clocked_) return f();
    const std::uint64_t before = cycles::now();
    f();
    counts.ticks += cycles::now() - before;
  }

  Call& c_;
  const std::deque<Step>& steps_;
  std::uint32_t firstEpoch_;
  std::size_t begin_, end_;  // the steps run per fragment: [begin_, end_)
  bool clocked_;             // this call's steps are timed
};

// What the descriptors say of this call: its shape, and the buffers peers may read.
void agree(ExecContext& ctx, ExecState& state, const Plan& plan, const CallArgs& a, const CallShape& shape) {
  using C = Collective;
  const C c = plan.coll;
  const bool isRoot = ctx.topo.rank() == a.root;
  const std::size_t bytes = plan.count * dataTypeSize(a.dt), n = ctx.topo.size();
  std::size_t sendBytes = c == C::ReduceScatter || c == C::AllToAll ? bytes * n : bytes;
  std::size_t recvBytes = c == C::AllGather || c == C::AllToAll ? bytes * n : bytes;
  if (c == C::Broadcast && !isRoot) sendBytes = 0;
  if (c == C::Reduce && !isRoot) recvBytes = 0;
  state.direct.agree(ctx, shape, sendBytes ? a.send : nullptr, sendBytes, recvBytes ? a.recv : nullptr, recvBytes);
}

void runPlan(ExecContext& ctx, ExecState& state, const Choice& choice, const Plan& plan, const CallArgs& args,
             std::uint32_t firstEpoch) {
  CallStats& stats = ctx.stats;
  stats.plan = &plan;
  if (ctx.live) ctx.live->plan.store(&plan, std::memory_order_release);
  stats.steps.assign(plan.steps.size(), StepCount{});  // keeps its capacity: no allocation once warm
  Call call(ctx, state, plan, args);
  if (!plan.unfit.empty()) fail(ErrorCode::NotSupported, ctx.what, ": ", plan.unfit);
  Pipeline(call, firstEpoch).run();
  if (ctx.fault) [[unlikely]]
    ctx.fault->reached(ctx.seq, plan.steps.size(), true, ctx.what);
  // This rank's share of the bound; for all-to-allv, what this rank's counts send across.
  stats.scaleOutBoundBytes = choice.boundShare;
  if (plan.coll == Collective::AllToAllv)
    for (int peer = 0; peer < ctx.topo.size(); ++peer)
      if (ctx.topo.domainOf(peer) != ctx.topo.domain())
        stats.scaleOutBoundBytes += args.sendCounts[peer] * dataTypeSize(args.dt);
}

}  // namespace

void execute(ExecContext& ctx, ExecState& state, const Choice& choice, const CallArgs& args) {
  const Plan& first = choice.plans.front();
  // Point-to-point calls differ on their two sides by design: they are not stamped.
  const bool collective = first.coll != Collective::Send && first.coll != Collective::Recv;
  const CallShape shape = shapeOf(first, args);
  if (collective) stampCall(ctx, shape);
  if (choice.plans.size() == 1) return runPlan(ctx, state, choice, first, args, 0);
  // A direct path first: agree on the one every rank of the domain can take.
  agree(ctx, state, first, args, shape);  // the shape stamped above
  const int rootLocal = args.root >= 0 && args.root < ctx.topo.size() ? ctx.topo.localRankOf(args.root) : -1;
  for (const Plan& plan : choice.plans) {
    if (plan.path == Path::Staged) break;
    if (!state.direct.possible(plan.path, plan.directNeeds, rootLocal)) continue;
    const std::uint32_t firstEpoch = state.direct.take(plan.path, plan.fragments);
    return runPlan(ctx, state, choice, plan, args, firstEpoch);  // its Agree step is done
  }
  state.direct.abandon();
  runPlan(ctx, state, choice, choice.staged(), args, 0);
}

Call::Call(ExecContext& context, ExecState& execState, const Plan& p, const CallArgs& a)
    : ctx(context),
      state(execState),
      plan(p),
      args(a),
      es(p.elementBytes),
      me(context.topo.localRank()),
      k(context.topo.domainSize()),
      rails(context.topo.minDomainSize()),
      rootLocal(p.root >= 0 && (p.coll == Collective::Broadcast || p.coll == Collective::Reduce)
                    ? context.topo.localRankOf(a.root)
                    : -1) {}

TransferBatch& Call::postedBatch(const Fragment& f) { return *state.batches[f.slot * plan.steps.size() + step]; }

TransferBatch& Call::newBatch(const Fragment& f) {
  const std::size_t at = f.slot * plan.steps.size() + step;
  if (state.batches.size() <= at) state.batches.resize(at + 1);
  if (!state.batches[at]) state.batches[at] = std::make_unique<TransferBatch>();
  TransferBatch& batch = *state.batches[at];
  batch.begin(ctx, ctx.stats.steps[step]);
  return batch;
}

void Call::exchange(const Fragment& f, std::uint64_t index, int to, const std::byte* out, std::size_t outLen, int from,
                    std::byte* in, std::size_t inLen) {
  ctx.renewDeadline();
  TransferBatch& batch = newBatch(f);
  if (outLen) batch.send(to, tag(f, index), out, outLen);
  if (inLen) batch.recv(from, tag(f, index), in, inLen);
  batch.wait();
}

void Call::finishAvg(const Step& st, std::byte* dst, std::size_t n) const {
  if (st.finalizes && args.op == ReduceOp::Avg) tiercc::finishAvg(dst, n, args.dt, ctx.topo.size());
}

}  // namespace tiercc
