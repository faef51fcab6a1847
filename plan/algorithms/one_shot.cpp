// One-shot plans for small messages, where synchronisations cost more than bytes.
//
// Allreduce (and barrier): every rank stages its input and reduces ALL of its domain's inputs
// itself (one wait instead of reduce-scatter's and allgather's two), then exchanges the domain's
// result with its rail peers and reduces the D results in domain order. Each rail carries the
// whole message, k times the bound in all: the right trade only for small messages, and the
// statistics say so.
//
// Allgather, all-to-all and reduce-scatter, inside one domain: every rank stages its input (its
// block; all of its blocks) and copies its output straight from its peers' inputs (a
// reduce-scatter reduces its block of every input, in local-rank order). Back-to-back one-shot
// rounds alternate between two buffers (exec/one_shot.cpp), so a round that fits half the
// window waits once, on its peers' inputs, where the hierarchical plan's staged round also
// waits for the window's release.
//
// Broadcast and reduce, inside one domain: the root stages its vector there and every other rank
// copies it; every other rank stages its input and the root reduces them all. Nobody waits for
// the release: a rank that stages waits only until its peers have left the round before, and a
// rank that reads only for the data, so the stagers may run a call ahead (exec/one_shot.cpp).
#include "core/errors.hpp"
#include "plan/build.hpp"

namespace tiercc::plans {

// Above this the one-shot gathers lose to the hierarchical plan on this project's hosts (2 ranks,
// docs/performance.md): back-to-back calls alternate between two buffers, twice the footprint of
// one, and the copies leave the cache. The cost model has no cache to price it with.
constexpr std::size_t kOneShotGatherBytes = 512 << 10;

std::string oneShotUnsupported(const Request& req, const Shape& s) {
  const std::size_t bytes = req.coll == Collective::Barrier ? 1 : req.count * dataTypeSize(req.dt);
  const std::size_t domains = std::max(1, s.numDomains());
  if (!s.uniform()) return "one_shot needs domains of equal size (every rank needs a rail peer)";
  if (bytes * domains > req.windowBytes)
    return concat("one_shot needs the ", domains, " domain results of ", bytes, " B to fit the window (",
                  req.windowBytes, " B)");
  return "";
}

std::string oneShotInDomainUnsupported(const Request& req, const Shape& s) {
  if (s.numDomains() > 1)
    return concat("one_shot ", toString(req.coll),
                  " runs inside one domain (across domains the hierarchical plan's rails carry the data once)");
  const std::size_t staged = oneShotInputBytes(req, s);
  if (staged > req.windowBytes)
    return concat("one_shot ", toString(req.coll), " needs its input of ", staged, " B to fit the window (",
                  req.windowBytes, " B)");
  if (staged > kOneShotGatherBytes)
    return concat("one_shot ", toString(req.coll), " stages at most ", kOneShotGatherBytes, " B (this input: ",
                  staged, " B): above, its alternating buffers no longer stay in cache");
  return "";
}

std::size_t oneShotInputBytes(const Request& req, const Shape& s) {
  const std::size_t block = req.count * dataTypeSize(req.dt);
  const bool allBlocks = req.coll == Collective::AllToAll || req.coll == Collective::ReduceScatter;
  return allBlocks ? block * static_cast<std::size_t>(s.size()) : block;
}

void oneShotGather(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t B = plan.count * dataTypeSize(req.dt), N = s.size(), k = s.maxDomainSize();
  const std::uint64_t input = oneShotInputBytes(req, s);
  cutFragments(plan, plan.count, 1);
  plan.rounds = Rounds::InStep;
  const char* what = plan.coll == Collective::AllGather  ? "every rank copies every peer's block"
                     : plan.coll == Collective::AllToAll ? "every rank copies its block of every peer's input"
                                                         : "every rank reduces its block of every peer's input";
  Step& gather = addStep(plan, StepKind::OneShot, Group::Domain, what, Pieces::Whole, Buffer::Send, Buffer::Recv);
  gather.finalizes = plan.coll == Collective::ReduceScatter;
  // Alternating halves of the window (or fast boxes) skip the wait for its release.
  gather.latencySteps = input <= req.windowBytes / 2 ? 1 : 2;
  gather.busiestBytes = double((k - 1) * B);
  // Its input in; a gather copies its own block out too (a reduce-scatter reduces it with the
  // peers' blocks).
  gather.localBytes = double(plan.coll == Collective::ReduceScatter ? input : input + B);
  gather.scaleUpBytes = N * (k - 1) * B;
  describeExchange(gather, Exchange::InDomain, double(B));
}

void oneShotRooted(Plan& plan, const Request& req, const Shape& s) {
  const bool broadcast = req.coll == Collective::Broadcast;
  const std::uint64_t S = plan.count * dataTypeSize(req.dt), k = s.maxDomainSize();
  cutFragments(plan, plan.count, 1);
  plan.rounds = Rounds::InStep;
  Step& st = addStep(plan, StepKind::OneShot, Group::Domain,
                     broadcast ? "every rank copies the root's vector" : "the root reduces every rank's input",
                     Pieces::Whole, Buffer::Send, Buffer::Recv);
  st.finalizes = !broadcast;
  st.latencySteps = S <= req.windowBytes / 2 ? 1 : 2;
  st.busiestBytes = double(broadcast ? S : (k - 1) * S);  // a peer reads the root's vector; a root, every peer's
  st.localBytes = double(S);                               // what the ranks that stage copy in
  st.scaleUpBytes = (k - 1) * S;
}

void oneShot(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t S = plan.count * dataTypeSize(req.dt), D = s.numDomains(), N = s.size(), k = s.maxDomainSize();
  cutFragments(plan, plan.count, 1);
  plan.rounds = Rounds::InStep;
  Step& reduce = addStep(plan, StepKind::OneShot, Group::Domain, "every rank reduces its whole domain", Pieces::Whole,
                         Buffer::Send, D > 1 ? Buffer::Receive : Buffer::Recv);
  reduce.finalizes = D == 1;
  reduce.latencySteps = 1;
  reduce.busiestBytes = double((k - 1) * S);
  reduce.localBytes = double(S);
  reduce.scaleUpBytes = N * (k - 1) * S;
  describeExchange(reduce, Exchange::InDomain, double(S));
  if (D == 1) return;
  Step& rail = addStep(plan, StepKind::RailCopy, Group::Rail, "the domain's result to every rail peer", Pieces::Whole,
                       Buffer::Receive, Buffer::Receive);
  rail.latencySteps = 1;
  rail.busiestBytes = double((D - 1) * S);
  rail.scaleOutBytes = N * (D - 1) * S;
  describeExchange(rail, Exchange::Rail, double(S));
  Step& local = addStep(plan, StepKind::LocalReduce, Group::Self, "the domains' results in domain order", Pieces::Whole,
                        Buffer::Receive, Buffer::Recv);
  local.finalizes = true;
}

}  // namespace tiercc::plans
