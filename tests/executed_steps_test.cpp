// The plan is what runs: for every collective and every algorithm (each forced with
// TIERCC_ALGO, and unforced), on every path a domain can take (staged; cross-memory attach and
// zero copy on buffers from allocShared, each forced with TIERCC_PATH), on even, uneven and
// interleaved domains, the bytes each step moved on BOTH tiers, summed over the ranks, equal
// what the plan's step says, and the bound the ranks record equals the plan's. A small window
// (TIERCC_SHM_CHUNK) and a count that divides nothing evenly make the plans cut several
// fragments with uneven parts, two in flight across domains. Exact byte counts, not timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "core/errors.hpp"
#include "core/params.hpp"
#include "plan/registry.hpp"
#include "plan/selector.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

constexpr std::size_t kWindow = 16384;  // bytes: several fragments per call
constexpr std::size_t kCount = 3001;    // elements per rank (or per peer): prime, so parts are uneven

Shape shapeOfJob(Communicator& c) {
  std::vector<int> mine{c.domain()}, all(c.size());
  c.allgather(mine.data(), all.data(), 1, DataType::I32);
  Shape s;
  s.domainOf = all;
  s.domainSizes.assign(c.numDomains(), 0);
  for (int d : all) ++s.domainSizes[d];
  return s;
}

// The counts of the all-to-allv: ragged, rank r sends (r + 2 j + 1) x 37 elements to rank j.
std::size_t raggedCount(int from, int to) { return static_cast<std::size_t>(from + 2 * to + 1) * 37; }

struct Buffers {
  float* in;
  float* out;
  std::size_t capacity;  // floats each
};

// Runs `coll` once on `c`; returns the request the runtime planned it with.
Request runOnce(Communicator& c, Collective coll, const Buffers& b) {
  const int n = c.size(), me = c.rank();
  std::fill(b.in, b.in + b.capacity, 1.0f);
  Request req;
  req.coll = coll;
  req.count = kCount;
  req.dt = DataType::F32;
  req.root = n - 1;
  req.windowBytes = kWindow;
  req.radix = static_cast<int>(params::getInt("TIERCC_KNOMIAL_RADIX"));
  switch (coll) {
    case Collective::AllReduce:
      c.allreduce(b.in, b.out, kCount, DataType::F32, ReduceOp::Sum);
      break;
    case Collective::ReduceScatter:
      c.reduceScatter(b.in, b.out, kCount, DataType::F32, ReduceOp::Sum);
      break;
    case Collective::AllGather:
      c.allgather(b.in, b.out, kCount, DataType::F32);
      break;
    case Collective::Broadcast:
      c.broadcast(b.in, b.out, kCount, DataType::F32, n - 1);
      break;
    case Collective::Reduce:
      c.reduce(b.in, b.out, kCount, DataType::F32, ReduceOp::Sum, n - 1);
      break;
    case Collective::AllToAll:
      c.alltoall(b.in, b.out, kCount, DataType::F32);
      break;
    case Collective::AllToAllv: {
      std::vector<std::size_t> sc(n), sd(n), rc(n), rd(n);
      for (int j = 0; j < n; ++j) {
        sc[j] = raggedCount(me, j);
        rc[j] = raggedCount(j, me);
        sd[j] = j ? sd[j - 1] + sc[j - 1] : 0;
        rd[j] = j ? rd[j - 1] + rc[j - 1] : 0;
      }
      c.alltoallv(b.in, sc.data(), sd.data(), b.out, rc.data(), rd.data(), DataType::F32);
      req.count = 0;
      break;
    }
    case Collective::Barrier:
      c.barrier();
      req.dt = DataType::U8;
      break;
    case Collective::Send:
    case Collective::Recv: {
      // Along a ring, both: even ranks send first, odd ones receive first, so that no pair
      // waits on itself. The statistics are of the last call: a receive on even ranks, a send
      // on odd ones.
      const int next = (me + 1) % n, prev = (me + n - 1) % n;
      const bool sendFirst = me % 2 == 0;
      auto send = [&] { c.send(b.in, kCount, DataType::F32, next); };
      auto recv = [&] { c.recv(b.out, kCount, DataType::F32, prev); };
      sendFirst ? send() : recv();
      sendFirst ? recv() : send();
      req.root = me;
      req.peer = sendFirst ? prev : next;
      req.coll = sendFirst ? Collective::Recv : Collective::Send;
      break;
    }
  }
  return req;
}

constexpr std::size_t kKinds = static_cast<std::size_t>(StepKind::Recv) + 1;

// Every rank's counts summed by step kind (domains on different paths run plans whose steps
// differ only in the steps that move nothing: agree, stage, close), then the bound.
// The plan's steps with their bytes, for a failure's message.
std::string stepsOf(const Plan& plan) {
  std::string out;
  for (const Step& st : plan.steps)
    out += concat("  ", toString(st.kind), " (", toString(st.group), "): ", st.scaleUpBytes, " B up, ",
                  st.scaleOutBytes, " B out\n");
  return out;
}

std::vector<std::uint64_t> sumOverRanks(Communicator& c, const TierStats& before, const TierStats& after,
                                        const Plan& plan) {
  std::vector<std::uint64_t> mine(2 * kKinds + 1, 0), all(mine.size());
  for (std::size_t i = 0; i < after.lastSteps.size() && i < plan.steps.size(); ++i) {
    const std::size_t kind = static_cast<std::size_t>(plan.steps[i].kind);
    mine[2 * kind] += after.lastSteps[i].scaleUpBytes;
    mine[2 * kind + 1] += after.lastSteps[i].scaleOutBytes;
  }
  mine[2 * kKinds] = after.scaleOutBoundBytes - before.scaleOutBoundBytes;
  c.allreduce(mine.data(), all.data(), mine.size(), DataType::U64, ReduceOp::Sum);
  return all;
}

Path pathNamed(const std::string& name) {
  if (name == "zero_copy") return Path::ZeroCopy;
  if (name == "cma") return Path::CrossMemory;
  return Path::Staged;
}

// Checks every step of the plan that ran against what the ranks measured; returns what was
// checked ("allreduce:hierarchical (staged), 6 steps").
std::string checkCall(Communicator& c, Collective coll, const std::string& forced, const Buffers& b) {
  const Shape shape = shapeOfJob(c);
  const TierStats before = c.stats();
  Request req = runOnce(c, coll, b);
  const TierStats after = c.stats();
  Algorithm ran;
  TIERCC_CHECK(parseAlgorithm(after.algorithm, ran), "unknown algorithm " << after.algorithm);
  if (forced != "auto" && req.coll != Collective::Send && req.coll != Collective::Recv)
    TIERCC_CHECK(after.algorithm == forced, toString(coll) << ": ran " << after.algorithm << ", forced " << forced);
  // The ragged all-to-allv: the plan is exact given the whole count matrix.
  std::vector<std::uint64_t> matrix;
  if (coll == Collective::AllToAllv) {
    for (int i = 0; i < c.size(); ++i)
      for (int j = 0; j < c.size(); ++j) matrix.push_back(raggedCount(i, j) * sizeof(float));
    req.alltoallvBytes = &matrix;
  }
  const Plan plan = buildPlan(ran, req, shape, pathNamed(after.scaleUpPath));
  // What the plan says, by step kind; for send and recv, each rank ran one of the two last.
  std::vector<std::uint64_t> expected(2 * kKinds + 1, 0);
  for (const Step& st : plan.steps) {
    expected[2 * static_cast<std::size_t>(st.kind)] += st.scaleUpBytes;
    expected[2 * static_cast<std::size_t>(st.kind) + 1] += st.scaleOutBytes;
  }
  expected[2 * kKinds] = plan.boundBytes;
  if (coll == Collective::Send || coll == Collective::Recv) {  // every rank sent once, to the next
    Request sent = req;
    sent.coll = Collective::Send;
    sent.peer = (c.rank() + 1) % c.size();
    expected[2 * kKinds] = slowTierBound(sent, shape);
  }
  if (coll == Collective::Send || coll == Collective::Recv) {
    std::vector<std::uint64_t> all(expected.size());
    c.allreduce(expected.data(), all.data(), expected.size(), DataType::U64, ReduceOp::Sum);
    expected = all;
  }
  const std::vector<std::uint64_t> measured = sumOverRanks(c, before, after, plan);
  const std::string what = std::string(toString(coll)) + ":" + after.algorithm + " (" + after.scaleUpPath + ")";
  TIERCC_CHECK(after.lastSteps.size() == plan.steps.size(),
               what << ": ran " << after.lastSteps.size() << " steps, the plan has " << plan.steps.size());
  for (std::size_t i = 0; i < plan.steps.size(); ++i)
    TIERCC_CHECK(std::string(after.lastSteps[i].kind) == toString(plan.steps[i].kind),
                 what << ": step " << i + 1 << " ran " << after.lastSteps[i].kind << ", the plan has "
                      << toString(plan.steps[i].kind));
  for (std::size_t kind = 0; kind < kKinds; ++kind)
    for (int tier = 0; tier < 2; ++tier)
      TIERCC_CHECK(measured[2 * kind + tier] == expected[2 * kind + tier],
                   what << ", " << toString(static_cast<StepKind>(kind))
                        << " steps: " << (tier ? "scale-out" : "scale-up") << " bytes measured "
                        << measured[2 * kind + tier] << ", the plan says " << expected[2 * kind + tier] << "\n"
                        << stepsOf(plan));
  // Where every rank ran this very plan (one path everywhere, not send or recv), step by step too.
  const std::uint64_t steps[2] = {plan.steps.size(), ~plan.steps.size()};
  std::uint64_t most[2];
  c.allreduce(steps, most, 2, DataType::U64, ReduceOp::Max);
  if (most[0] == steps[0] && most[1] == steps[1] && coll != Collective::Send && coll != Collective::Recv) {
    std::vector<std::uint64_t> mine(2 * plan.steps.size()), all(mine.size());
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      mine[2 * i] = after.lastSteps[i].scaleUpBytes;
      mine[2 * i + 1] = after.lastSteps[i].scaleOutBytes;
    }
    c.allreduce(mine.data(), all.data(), mine.size(), DataType::U64, ReduceOp::Sum);
    for (std::size_t i = 0; i < plan.steps.size(); ++i)
      TIERCC_CHECK(all[2 * i] == plan.steps[i].scaleUpBytes && all[2 * i + 1] == plan.steps[i].scaleOutBytes,
                   what << ", step " << i + 1 << " (" << toString(plan.steps[i].kind) << "): measured " << all[2 * i]
                        << " B up and " << all[2 * i + 1] << " B out, the plan says " << plan.steps[i].scaleUpBytes
                        << " and " << plan.steps[i].scaleOutBytes);
  }
  TIERCC_CHECK(measured.back() == expected.back(),
               what << ": recorded bound " << measured.back() << ", the plan's " << expected.back());
  return what + ", " + std::to_string(plan.steps.size()) + " steps";
}

struct Topo {
  const char* name;
  std::vector<int> domainIds;
};

void checkTopology(const Topo& topo) {
  const int ranks = static_cast<int>(topo.domainIds.size());
  JobOptions jo;
  jo.timeout = std::chrono::milliseconds(240000);
  jo.env = {{"TIERCC_TIMEOUT", "60s"}, {"TIERCC_SHM_CHUNK", std::to_string(kWindow)}};
  jo.rankEnv = [&](int r) {
    return std::vector<std::pair<std::string, std::string>>{{"TIERCC_DOMAIN_ID", std::to_string(topo.domainIds[r])}};
  };
  JobResult result = runRanks(
      ranks,
      [&](int rank, const std::string& store) {
        Communicator world(store, ranks, rank);
        const std::size_t capacity = 4 * kCount * ranks + 4096;  // floats: the ragged all-to-allv's too
        std::vector<float> in(capacity), out(capacity);
        int checked = 0;
        for (const char* variant : {"ordinary", "cma", "symmetric"}) {
          const std::string v = variant;
          setenv("TIERCC_PATH", v == "cma" ? "cma" : v == "symmetric" ? "zero_copy" : "auto", 1);
          for (int ci = 0; ci < kNumCollectives; ++ci) {
            const auto coll = static_cast<Collective>(ci);
            if (coll == Collective::Recv) continue;  // the send's run checks both
            std::vector<std::string> algos{"auto"};
            for (const AlgorithmEntry* e : algorithmsFor(coll)) algos.push_back(toString(e->algorithm));
            for (const std::string& algo : algos) {
              // Before the split: a forced algorithm that cannot run here fails the new
              // communicator's own collectives at init.
              Request probe;
              probe.coll = coll;
              probe.count = kCount;
              probe.windowBytes = kWindow;
              Algorithm a;
              if (algo != "auto" && parseAlgorithm(algo, a) && !unsupportedReason(a, probe, shapeOfJob(world)).empty())
                continue;
              setenv("TIERCC_ALGO", (std::string(toString(coll)) + ":" + algo).c_str(), 1);
              Communicator c = world.split(0, rank);  // a new communicator reads TIERCC_ALGO, TIERCC_PATH
              Buffers b{in.data(), out.data(), capacity};
              void* shared = nullptr;
              if (v == "symmetric") {
                shared = c.allocShared(2 * capacity * sizeof(float));
                b = {static_cast<float*>(shared), static_cast<float*>(shared) + capacity, capacity};
              }
              const std::string what = checkCall(c, coll, algo, b);
              if (rank == 0) std::printf("[checked] %s %s\n", variant, what.c_str());
              ++checked;
              c.barrier();
              if (shared) c.freeShared(shared);
            }
          }
        }
        TIERCC_CHECK(checked > 60, "only " << checked << " calls checked");
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
  // Print what was covered (rank 0's lines), so a reader sees every path was exercised.
  if (!result.ranks.empty()) {
    std::istringstream lines(result.ranks[0].output);
    std::string line, paths;
    int n = 0;
    while (std::getline(lines, line))
      if (line.rfind("[checked]", 0) == 0) {
        ++n;
        for (const char* p : {"(staged)", "(cma)", "(zero_copy)"})
          if (line.find(p) != std::string::npos && paths.find(p) == std::string::npos) paths += std::string(" ") + p;
      }
    std::printf("%s: %d calls checked, paths:%s\n", topo.name, n, paths.c_str());
  }
}

class ExecutedStepsMatchThePlan : public ::testing::TestWithParam<Topo> {};

TEST_P(ExecutedStepsMatchThePlan, OnEveryCollectiveAlgorithmAndPath) { checkTopology(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Topologies, ExecutedStepsMatchThePlan,
    ::testing::Values(Topo{"TwoDomainsOfTwo", {0, 0, 1, 1}}, Topo{"UnevenThreePlusOne", {0, 0, 0, 1}},
                      Topo{"InterleavedDomains", {0, 1, 0, 1}}, Topo{"OneDomainOfThree", {0, 0, 0}},
                      Topo{"ThreeUnevenDomains", {0, 0, 1, 1, 2}}, Topo{"UnevenThreePlusTwo", {0, 0, 0, 1, 1}}),
    [](const ::testing::TestParamInfo<Topo>& p) { return std::string(p.param.name); });

// Hierarchical allreduce crosses at the bound and spreads it evenly over the rails (each rail
// is one NIC of each domain): max/min per rail <= 1.05.
TEST(Planner, HierarchicalAllreduceSpreadsOverRails) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "60s"}, {"TIERCC_DOMAIN_SIZE", "3"}, {"TIERCC_ALGO", "allreduce:hierarchical"}};
  JobResult result = runRanks(
      6,
      [](int rank, const std::string& store) {
        Communicator c(store, 6, rank);
        std::vector<float> in(3 << 20, 1.0f), out(in.size());
        const TierStats before = c.stats();
        c.allreduce(in.data(), out.data(), in.size(), DataType::F32, ReduceOp::Sum);
        const TierStats after = c.stats();
        std::uint64_t mine[2] = {after.scaleOutBytes - before.scaleOutBytes, static_cast<std::uint64_t>(c.localRank())};
        std::vector<std::uint64_t> all(2 * c.size());
        c.allgather(mine, all.data(), 2, DataType::U64);
        std::vector<std::uint64_t> perRail(3, 0);
        std::uint64_t total = 0;
        for (int r = 0; r < c.size(); ++r) {
          perRail[all[2 * r + 1]] += all[2 * r];
          total += all[2 * r];
        }
        const std::uint64_t bound = 2 * (2 - 1) * in.size() * sizeof(float);
        TIERCC_CHECK(total == bound, "sent " << total << " across domains, bound " << bound);
        const auto [lo, hi] = std::minmax_element(perRail.begin(), perRail.end());
        TIERCC_CHECK(*lo > 0 && double(*hi) / double(*lo) <= 1.05,
                     "rails carried " << perRail[0] << ", " << perRail[1] << ", " << perRail[2] << " bytes");
        for (float v : out) TIERCC_CHECK(v == 6.0f, "allreduce result " << v);
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

// Step times: a call the cost model prices at 20 us or more is timed step by step every time; a
// shorter one every eighth call (its seconds are 0 otherwise), so exactly 2 of 16 in a row.
TEST(StepTimes, EveryLongCallAndOneShortCallInEight) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "60s"}};
  JobResult result = runRanks(
      2,
      [](int rank, const std::string& store) {
        Communicator c(store, 2, rank);
        auto seconds = [&] {
          double sum = 0;
          for (const StepStats& st : c.stats().lastSteps) sum += st.seconds;
          return sum;
        };
        std::vector<float> in(1 << 20, 1.0f), out(in.size());
        for (int i = 0; i < 3; ++i) {
          c.allreduce(in.data(), out.data(), in.size(), DataType::F32, ReduceOp::Sum);
          TIERCC_CHECK(seconds() > 0, "a 4 MiB allreduce recorded no step time");
        }
        int timed = 0;
        for (int i = 0; i < 16; ++i) {
          c.allreduce(in.data(), out.data(), 2, DataType::F32, ReduceOp::Sum);
          timed += seconds() > 0;
        }
        TIERCC_CHECK(timed == 2, timed << " of 16 consecutive 8 B allreduces were timed, not 2");
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
