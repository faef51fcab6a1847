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

Step& addStep(Plan& plan, StepKind kind, Tier tier, Group group, std::string what) {
  Step& st = plan.steps.emplace_back();
  st.kind = kind;
  st.tier = tier;
  st.group = group;
  st.what = std::move(what);
  st.path = plan.path;
  // After the previous step; a step beyond the 64th waits for everything posted (Fragment::posted).
  const std::size_t previous = plan.steps.size() - 1;
  if (previous > 0 && previous <= 64) st.after = std::uint64_t(1) << (previous - 1);
  return st;
}

void flatTier(Step& st, bool crosses) {
  st.group = Group::World;
  st.overTransport = true;
  st.path = Path::Staged;
  st.tier = crosses ? Tier::ScaleOut : Tier::ScaleUp;
}

std::size_t flatScratchElements(const Request& req, const Shape& s, bool withAccumulate) {
  std::size_t bytes = receiveBytes(req.windowBytes, s.numDomains());
  if (withAccumulate) bytes = std::min(bytes, accumulateBytes(req.windowBytes));
  return bytes / dataTypeSize(req.dt);
}

std::uint64_t crossPairs(const Shape& s) {
  std::uint64_t n = 0;
  for (int k : s.domainSizes) n += static_cast<std::uint64_t>(k) * (s.size() - k);
  return n;
}

std::uint64_t insidePairs(const Shape& s) {
  std::uint64_t n = 0;
  for (int k : s.domainSizes) n += static_cast<std::uint64_t>(k) * (k - 1);
  return n;
}

void addAgree(Plan& plan) {
  Step& st = addStep(plan, StepKind::Agree, Tier::ScaleUp, Group::Domain, "descriptors of every rank's buffers");
  st.perCall = true;
  st.latencySteps = 1;
}

Step& addStage(Plan& plan, Pieces pieces, double localBytes) {
  Step& st = addStep(plan, StepKind::Stage, Tier::ScaleUp, Group::Self, "input into the window");
  st.pieces = pieces;
  st.in = Buffer::Send;
  st.out = Buffer::Window;
  st.localBytes = localBytes;
  return st;
}

Step& addPublish(Plan& plan, Pieces pieces, double localBytes) {
  Step& st = addStep(plan, StepKind::Publish, Tier::ScaleUp, Group::Self, "results where the domain reads them");
  st.pieces = pieces;
  st.out = plan.path == Path::Staged ? Buffer::Window : Buffer::Recv;
  st.localBytes = localBytes;
  return st;
}

void addClose(Plan& plan) {
  Step& st = addStep(plan, StepKind::Close, Tier::ScaleUp, Group::Domain, "no peer reads this rank's buffers any more");
  st.perCall = true;
  st.latencySteps = 1;
}

}  // namespace tiercc::plans
