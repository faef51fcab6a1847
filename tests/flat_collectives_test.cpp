// The flat algorithms (collectives/flat) through the public API, each forced with TIERCC_ALGO:
// one multi-process job per topology creates a communicator per set of forced algorithms and
// runs every collective of the set over datatypes, ops, counts (0, 1, odd, and one that needs
// several fragments of the 4 KiB scratch), roots and both placements, against the independent
// reference of collective_reference.hpp. Also checks the slow-tier accounting of a flat ring
// against the hierarchical allreduce, in exact bytes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "tests/collective_checks.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

const DataType kTypes[] = {DataType::F32, DataType::BF16, DataType::I32, DataType::F64};
// 7001 elements: several fragments of the 4 KiB scratch for every algorithm and type.
const std::size_t kCounts[] = {0, 1, 1001, 7001};

std::vector<ReduceOp> opsFor(DataType dt) {
  std::vector<ReduceOp> ops{ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg};
  if (!isFloat(dt)) ops.push_back(ReduceOp::Prod);
  return ops;
}

// One communicator's forced algorithms (TIERCC_ALGO) and k-nomial radix.
struct AlgoSet {
  std::string algo;
  int radix;
  bool has(const char* coll) const { return ("," + algo).find("," + std::string(coll) + ":") != std::string::npos; }
  // The algorithm forced for `coll`, as stats().algorithm reports it.
  std::string of(const char* coll) const {
    std::size_t at = ("," + algo).find("," + std::string(coll) + ":") + std::strlen(coll) + 1;
    return algo.substr(at, algo.find(',', at) - at);
  }
};

// Every rank must end with the same bits (not only values within a tolerance): compares a
// hash of `out` across ranks with the communicator's own allreduce (max and min agree).
void checkSameEverywhere(Communicator& c, const Buffer& out, const std::string& what) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint8_t b : out) h = (h ^ b) * 1099511628211ull;
  std::uint64_t lo = 0, hi = 0;
  c.allreduce(&h, &hi, 1, DataType::U64, ReduceOp::Max);
  c.allreduce(&h, &lo, 1, DataType::U64, ReduceOp::Min);
  TIERCC_CHECK(lo == h && hi == h, what << ": ranks hold different bits");
}

void expectAlgorithm(Communicator& c, const AlgoSet& set, const char* coll, const std::string& what) {
  if (c.size() == 1) return;
  const std::string ran = c.stats().algorithm, want = set.of(coll);
  TIERCC_CHECK(ran == want, what << ": ran '" << ran << "', TIERCC_ALGO forced '" << want << "'");
}

// The shared checks for one set: each case is named by the algorithm forced for it, which
// stats() must then report, and an out-of-place allreduce must leave its send buffer alone.
CheckOptions optionsFor(Communicator& c, const AlgoSet& set) {
  CheckOptions o;
  o.tag = [&set](const char* coll) {
    const std::string algo = set.of(coll);
    return " (" + algo + (algo == "knomial" ? " radix " + std::to_string(set.radix) : std::string()) + ")";
  };
  o.after = [&c, &set](const char* coll, const std::string& what) { expectAlgorithm(c, set, coll, what); };
  o.checkAllreduceSendBuffer = true;
  return o;
}

// Allreduce; for float Avg at one count, also the same bits on every rank.
void checkAllreduceSameBits(Communicator& c, const CheckOptions& o, DataType dt, ReduceOp op, std::size_t count,
                            bool inPlace) {
  const Buffer out = checkAllreduce(c, dt, op, count, inPlace, o);
  if (op == ReduceOp::Avg && isFloat(dt) && count == 1001)
    checkSameEverywhere(c, out, caseName("allreduce", dt, count, inPlace) + " " + toString(op) + o.tagOf("allreduce"));
}

// Ragged all-to-all: rank s sends (s + 2d + shape) mod 5 x unit elements to rank d (some
// blocks empty, one shape all empty), packed in reverse order with gaps on both sides, so
// displacements are exercised and no block sits where a uniform layout would put it.
void checkAlltoallv(Communicator& c, DataType dt, int shape, std::size_t unit) {
  const int n = c.size(), me = c.rank();
  const std::size_t es = dataTypeSize(dt);
  auto countOf = [&](int s, int d) { return shape == 0 ? 0 : std::size_t((s + 2 * d + shape) % 5) * unit; };
  std::string what =
      std::string("alltoallv ") + toString(dt) + " shape " + std::to_string(shape) + " unit " + std::to_string(unit);
  std::vector<std::size_t> sc(n), sd(n), rc(n), rd(n);
  std::size_t sendEnd = 3, recvEnd = 5;  // gaps before the first block and between blocks
  for (int j = n - 1; j >= 0; --j) {
    sc[j] = countOf(me, j), sd[j] = sendEnd, sendEnd += sc[j] + 1;
    rc[j] = countOf(j, me), rd[j] = recvEnd, recvEnd += rc[j] + 2;
  }
  Buffer in(sendEnd * es, 0x77), out(recvEnd * es, 0x66), want = out;
  for (int j = 0; j < n; ++j) {
    Buffer b = pattern(dt, sc[j], me, j), w = pattern(dt, rc[j], j, me);
    std::memcpy(in.data() + sd[j] * es, b.data(), b.size());
    std::memcpy(want.data() + rd[j] * es, w.data(), w.size());
  }
  c.alltoallv(in.data(), sc.data(), sd.data(), out.data(), rc.data(), rd.data(), dt);
  TIERCC_CHECK(out == want, what << ": wrong data (or a gap was written)");
}

// A barrier lets nobody out before everyone is in: each rank appends a byte to a file, passes
// the barrier, and must then see every rank's byte (a broken barrier fails this, at least
// sometimes; a correct one never does).
void checkBarrier(Communicator& c, const std::string& dir) {
  for (int round = 0; round < 3; ++round) {
    const std::string path = dir + "/round" + std::to_string(round);
    {
      std::ofstream f(path, std::ios::app | std::ios::binary);
      f << 'x';
    }
    c.barrier();
    struct stat st {};
    TIERCC_CHECK(::stat(path.c_str(), &st) == 0 && st.st_size == c.size(),
                 "barrier round " << round << ": left it before every rank had entered (" << st.st_size << " of "
                                  << c.size() << ")");
  }
  c.barrier();  // everyone has checked: the files can go
  if (c.rank() == 0)
    for (int round = 0; round < 3; ++round) ::unlink((dir + "/round" + std::to_string(round)).c_str());
}

void runSet(Communicator& c, const AlgoSet& set, const std::string& scratchDir) {
  const CheckOptions o = optionsFor(c, set);
  const int n = c.size();
  const int roots[] = {0, n - 1, n / 2};
  for (std::size_t count : kCounts)
    for (bool inPlace : {false, true})
      for (DataType dt : kTypes) {
        const std::vector<ReduceOp> ops = opsFor(dt);
        for (std::size_t i = 0; i < ops.size(); ++i) {
          const ReduceOp op = ops[i];
          if (set.has("allreduce")) checkAllreduceSameBits(c, o, dt, op, count, inPlace);
          if (set.has("reduce_scatter")) checkReduceScatter(c, dt, op, count, inPlace, o);
          if (set.has("reduce")) checkReduce(c, dt, op, count, roots[(i + count) % 3], inPlace, o);
        }
        if (set.has("allgather")) checkAllgather(c, dt, count, inPlace, o);
        if (set.has("broadcast"))
          for (int root : {roots[count % 3], roots[(count + 1) % 3]}) checkBroadcast(c, dt, count, root, inPlace, o);
        if (set.has("alltoall")) checkAlltoall(c, dt, count, inPlace, o);
      }
  if (set.has("alltoallv"))
    for (DataType dt : {DataType::F32, DataType::F64})
      for (int shape : {0, 1, 2})
        for (std::size_t unit : {1, 1500}) checkAlltoallv(c, dt, shape, unit);
  if (set.has("barrier")) checkBarrier(c, scratchDir);
}

// Three communicators cover every flat algorithm, the linear all-to-all, and the radices 2, 3 and 4.
const AlgoSet kSets[] = {
    {"allreduce:ring,reduce_scatter:ring,allgather:ring,broadcast:knomial,reduce:knomial,alltoall:pairwise,"
     "alltoallv:pairwise,barrier:dissemination",
     2},
    {"allreduce:halving_doubling,allgather:bruck,broadcast:knomial,reduce:knomial,alltoall:bruck", 3},
    {"allreduce:recursive_doubling,broadcast:knomial,reduce:knomial,alltoall:linear", 4},
};

struct Topo {
  int ranks;
  int domainSize;              // 0: use domainIds
  std::vector<int> domainIds;  // per rank, when uneven
};

void runTopology(const Topo& topo, const char* transport = nullptr) {
  char dirTemplate[] = "/tmp/tiercc-flat-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  JobOptions jo;
  jo.timeout = std::chrono::seconds(60);
  jo.env.push_back({"TIERCC_TIMEOUT", "30s"});
  jo.env.push_back({"TIERCC_SHM_CHUNK", "4096"});  // scratch of 4 KiB: large counts fragment
  if (transport) jo.env.push_back({"TIERCC_TRANSPORT", transport});
  if (topo.domainSize) jo.env.push_back({"TIERCC_DOMAIN_SIZE", std::to_string(topo.domainSize)});
  if (!topo.domainIds.empty())
    jo.rankEnv = [&](int r) {
      return std::vector<std::pair<std::string, std::string>>{{"TIERCC_DOMAIN_ID", std::to_string(topo.domainIds[r])}};
    };
  JobResult result = runRanks(
      topo.ranks,
      [&](int rank, const std::string& store) {
        for (const AlgoSet& set : kSets) {
          // Read once, when the communicator is created.
          ::setenv("TIERCC_ALGO", set.algo.c_str(), 1);
          ::setenv("TIERCC_KNOMIAL_RADIX", std::to_string(set.radix).c_str(), 1);
          Communicator comm(store, topo.ranks, rank);
          runSet(comm, set, dir);
        }
      },
      jo);
  ::rmdir(dir.c_str());
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(FlatCollectives, OneRank) { runTopology({1, 1, {}}); }
TEST(FlatCollectives, OneDomainOfFour) { runTopology({4, 4, {}}); }
TEST(FlatCollectives, TwoDomainsOfOne) { runTopology({2, 1, {}}); }
TEST(FlatCollectives, TwoDomainsOfTwo) { runTopology({4, 2, {}}); }
TEST(FlatCollectives, ThreeDomainsOfTwo) { runTopology({6, 2, {}}); }
TEST(FlatCollectives, TwoDomainsOfThree) { runTopology({6, 3, {}}); }
// Flat algorithms address peers off the rails, which connect on first use: over UCX too.
TEST(FlatCollectives, TwoDomainsOfThreeOverUcx) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ucx");
  runTopology({6, 3, {}}, "ucx");
}
TEST(FlatCollectives, UnevenThreePlusOne) { runTopology({4, 0, {5, 5, 9, 5}}); }
// Five ranks: the butterflies fold one rank, Bruck and k-nomial have a partial last step.
TEST(FlatCollectives, UnevenTwoTwoOne) { runTopology({5, 2, {}}); }

// On 2 domains of 2, a flat ring in rank order crosses domains on 2 of its 4 links (1 -> 2 and
// 3 -> 0): those ranks each send 2 (p-1)/p S = 1.5 S across, 3 S in all, against the bound of
// 2(D-1)/D S per domain = 2 S. The hierarchical allreduce sends exactly the bound.
TEST(FlatCollectives, RingCrossesMoreThanTheBound) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "2"}, {"TIERCC_TIMEOUT", "30s"}};
  JobResult result = runRanks(
      4,
      [](int rank, const std::string& store) {
        const std::size_t count = 1 << 16;  // f32 elements: S = 256 KiB, a multiple of every split
        const std::uint64_t S = count * sizeof(float);
        std::vector<float> a(count, 1.0f), b(count);
        for (const char* algo : {"ring", "hierarchical"}) {
          ::setenv("TIERCC_ALGO", (std::string("allreduce:") + algo).c_str(), 1);
          Communicator c(store, 4, rank);
          c.allreduce(a.data(), b.data(), count, DataType::F32, ReduceOp::Sum);
          TIERCC_CHECK(b == std::vector<float>(count, 4.0f), algo << ": wrong sum");
          const TierStats st = c.stats();
          TIERCC_CHECK(st.algorithm == algo, "ran " << st.algorithm << " instead of " << algo);
          // Summed over ranks with the same algorithm; the stats read above are unaffected.
          std::uint64_t mine[3] = {st.scaleOutBytes, st.scaleOutBoundBytes, st.scaleUpBytes}, all[3];
          c.allreduce(mine, all, 3, DataType::U64, ReduceOp::Sum);
          TIERCC_CHECK(all[1] == 2 * S, algo << ": bound " << all[1] << ", expected " << 2 * S);
          if (std::string(algo) == "ring") {
            TIERCC_CHECK(all[0] == 3 * S && all[0] > all[1],
                         "ring sent " << all[0] << " bytes across, expected " << 3 * S);
            TIERCC_CHECK(all[2] == 3 * S, "ring sent " << all[2] << " bytes inside domains, expected " << 3 * S);
          } else {
            TIERCC_CHECK(all[0] == all[1], "hierarchical sent " << all[0] << " bytes across, bound " << all[1]);
          }
        }
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
