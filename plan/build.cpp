// The builders' shared pieces (see build.hpp).
#include "plan/build.hpp"

#include "core/errors.hpp"

namespace tiercc::plans {

void cutFragments(Plan& plan, std::size_t capacity, std::uint32_t slots) {
  if (capacity == 0 && plan.count > 0)
    plan.unfit = concat(toString(plan.coll), ":", toString(plan.algorithm),
                        " needs more room per fragment than the window and scratch give: raise TIERCC_SHM_CHUNK");
  plan.fragmentCount = std::max<std::size_t>(1, std::min(capacity, std::max<std::size_t>(plan.count, 1)));
  plan.fragments = static_cast<std::uint32_t>(ceilDiv(plan.count, plan.fragmentCount));
  plan.slots = slots;
}

Step& addStep(Plan& plan, StepKind kind, Group group, std::string what, Pieces pieces, Buffer in, Buffer out) {
  Step& st = plan.steps.emplace_back();
  st.kind = kind;
  st.tier = group == Group::Rail ? Tier::ScaleOut : Tier::ScaleUp;
  st.group = group;
  st.what = std::move(what);
  st.pieces = pieces;
  st.in = in;
  st.out = out;
  st.path = plan.path;
  // After the previous step; a step beyond the 64th waits for everything posted (Fragment::posted).
  const std::size_t previous = plan.steps.size() - 1;
  if (previous > 0 && previous <= 64) st.after = std::uint64_t(1) << (previous - 1);
  return st;
}

Step& addFlatStep(Plan& plan, StepKind kind, std::string what) {
  Step& st = addStep(plan, kind, Group::World, std::move(what));
  st.overTransport = true;
  st.path = Path::Staged;
  return st;
}

std::size_t flatScratchElements(const Request& req, const Shape& s, bool withAccumulate) {
  std::size_t bytes = receiveBytes(req.windowBytes, s.numDomains());
  if (withAccumulate) bytes = std::min(bytes, accumulateBytes(req.windowBytes));
  return bytes / dataTypeSize(req.dt);
}

void beginDomainPlan(Plan& plan, const Request& req, const Shape& s, std::size_t capacity, std::uint32_t directNeeds,
                     Pieces pieces, double stagedBytes) {
  const bool direct = plan.path != Path::Staged;
  cutFragments(plan, capacity, domainSlots(s, req));
  plan.rounds = direct ? Rounds::Direct : Rounds::PerFragment;
  plan.directNeeds = directNeeds;
  if (direct) {  // every rank publishes a descriptor of its buffers and reads its peers'
    Step& st = addStep(plan, StepKind::Agree, Group::Domain, "descriptors of every rank's buffers");
    st.perCall = true;
    st.latencySteps = 1;
  } else {  // every rank (broadcast: the root) copies its input into its window
    Step& st =
        addStep(plan, StepKind::Stage, Group::Self, "input into the window", pieces, Buffer::Send, Buffer::Window);
    st.localBytes = stagedBytes;
    // The call's first round waits until the domain has released the window (the rounds of
    // later fragments reuse slots released rounds before: no wait).
    st.latencySteps = 1;
  }
}

Step& addPublish(Plan& plan, Pieces pieces, double localBytes) {
  Step& st = addStep(plan, StepKind::Publish, Group::Self, "results where the domain reads them", pieces, Buffer::None,
                     plan.path == Path::Staged ? Buffer::Window : Buffer::Recv);
  st.localBytes = localBytes;
  return st;
}

void endDomainPlan(Plan& plan) {
  if (plan.path == Path::Staged) return;
  Step& st = addStep(plan, StepKind::Close, Group::Domain, "no peer reads this rank's buffers any more");
  st.perCall = true;
  st.latencySteps = 1;
}

}  // namespace tiercc::plans
