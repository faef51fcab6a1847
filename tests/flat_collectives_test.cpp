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

#include "tests/collective_reference.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

using Buffer = std::vector<std::uint8_t>;
const DataType kTypes[] = {DataType::F32, DataType::BF16, DataType::I32, DataType::F64};
// 7001 elements: several fragments of the 4 KiB scratch for every algorithm and type.
const std::size_t kCounts[] = {0, 1, 1001, 7001};

std::vector<ReduceOp> opsFor(DataType dt) {
  std::vector<ReduceOp> ops{ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg};
  if (!isFloat(dt)) ops.push_back(ReduceOp::Prod);
  return ops;
}

// Element i of the block that rank `from` addresses to rank `to`: small, exact in every type.
double blockValue(int from, int to, std::size_t i) { return double((from * 7 + to * 3 + i) % 100); }

Buffer pattern(DataType dt, std::size_t count, int from, int to) {
  std::size_t es = dataTypeSize(dt);
  Buffer b(count * es);
  for (std::size_t i = 0; i < count; ++i) encode(dt, blockValue(from, to, i), b.data() + i * es);
  return b;
}

std::string name(const char* coll, DataType dt, std::size_t count, bool inPlace) {
  return std::string(coll) + " " + toString(dt) + " count " + std::to_string(count) + (inPlace ? " in place" : "");
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

void checkAllreduce(Communicator& c, const AlgoSet& set, DataType dt, ReduceOp op, std::size_t count, bool inPlace) {
  std::string what = name("allreduce", dt, count, inPlace) + " " + toString(op) + " (" + set.of("allreduce") + ")";
  Buffer in = inputBuffer(dt, op, c.rank(), count), out(in.size(), 0x5a);
  if (inPlace) {
    out = in;
    c.allreduce(out.data(), out.data(), count, dt, op);
  } else {
    c.allreduce(in.data(), out.data(), count, dt, op);
    TIERCC_CHECK(in == inputBuffer(dt, op, c.rank(), count), what << ": the send buffer was written");
  }
  expectAlgorithm(c, set, "allreduce", what);
  checkResult(dt, op, out, expectedBuffer(dt, op, c.size(), count), what);
  if (op == ReduceOp::Avg && isFloat(dt) && count == 1001) checkSameEverywhere(c, out, what);
}

void checkReduceScatter(Communicator& c, const AlgoSet& set, DataType dt, ReduceOp op, std::size_t count,
                        bool inPlace) {
  std::string what = name("reduce_scatter", dt, count, inPlace) + " " + toString(op);
  const std::size_t es = dataTypeSize(dt), total = count * c.size();
  Buffer in = inputBuffer(dt, op, c.rank(), total);
  Buffer all = expectedBuffer(dt, op, c.size(), total);
  Buffer want(all.begin() + c.rank() * count * es, all.begin() + (c.rank() + 1) * count * es);
  Buffer out(count * es, 0x44);
  if (inPlace) {
    c.reduceScatter(in.data(), in.data() + c.rank() * count * es, count, dt, op);
    out.assign(in.begin() + c.rank() * count * es, in.begin() + (c.rank() + 1) * count * es);
  } else {
    c.reduceScatter(in.data(), out.data(), count, dt, op);
  }
  expectAlgorithm(c, set, "reduce_scatter", what);
  checkResult(dt, op, out, want, what);
}

void checkAllgather(Communicator& c, const AlgoSet& set, DataType dt, std::size_t count, bool inPlace) {
  std::string what = name("allgather", dt, count, inPlace) + " (" + set.of("allgather") + ")";
  const std::size_t bytes = count * dataTypeSize(dt);
  Buffer want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, r, 0);
    want.insert(want.end(), b.begin(), b.end());
  }
  Buffer out(want.size(), 0x33);
  Buffer in = pattern(dt, count, c.rank(), 0);
  if (inPlace) {
    std::memcpy(out.data() + c.rank() * bytes, in.data(), bytes);
    c.allgather(out.data() + c.rank() * bytes, out.data(), count, dt);
  } else {
    c.allgather(in.data(), out.data(), count, dt);
  }
  expectAlgorithm(c, set, "allgather", what);
  TIERCC_CHECK(out == want, what << ": wrong data");
}

void checkBroadcast(Communicator& c, const AlgoSet& set, DataType dt, std::size_t count, int root, bool inPlace) {
  std::string what =
      name("broadcast", dt, count, inPlace) + " root " + std::to_string(root) + " radix " + std::to_string(set.radix);
  Buffer want = pattern(dt, count, root, root);
  Buffer in = c.rank() == root ? want : Buffer(want.size(), 0x11);
  Buffer out(want.size(), 0x22);
  if (inPlace) {
    out = in;
    c.broadcast(out.data(), out.data(), count, dt, root);
  } else {
    c.broadcast(c.rank() == root ? in.data() : nullptr, out.data(), count, dt, root);
  }
  expectAlgorithm(c, set, "broadcast", what);
  TIERCC_CHECK(out == want, what << ": wrong data");
}

void checkReduce(Communicator& c, const AlgoSet& set, DataType dt, ReduceOp op, std::size_t count, int root,
                 bool inPlace) {
  std::string what = name("reduce", dt, count, inPlace) + " " + toString(op) + " root " + std::to_string(root) +
                     " radix " + std::to_string(set.radix);
  Buffer in = inputBuffer(dt, op, c.rank(), count);
  Buffer out(in.size(), 0x5a);
  if (inPlace) {
    out = in;
    c.reduce(out.data(), out.data(), count, dt, op, root);
  } else {
    c.reduce(in.data(), out.data(), count, dt, op, root);
  }
  expectAlgorithm(c, set, "reduce", what);
  if (c.rank() == root)
    checkResult(dt, op, out, expectedBuffer(dt, op, c.size(), count), what);
  else if (!inPlace)
    TIERCC_CHECK(out == Buffer(in.size(), 0x5a), what << ": a non-root receive buffer was written");
}

void checkAlltoall(Communicator& c, const AlgoSet& set, DataType dt, std::size_t count, bool inPlace) {
  std::string what = name("alltoall", dt, count, inPlace) + " (" + set.of("alltoall") + ")";
  Buffer in, want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, c.rank(), r), w = pattern(dt, count, r, c.rank());
    in.insert(in.end(), b.begin(), b.end());
    want.insert(want.end(), w.begin(), w.end());
  }
  Buffer out(in.size(), 0x55);
  if (inPlace) {
    out = in;
    c.alltoall(out.data(), out.data(), count, dt);
  } else {
    c.alltoall(in.data(), out.data(), count, dt);
  }
  expectAlgorithm(c, set, "alltoall", what);
  TIERCC_CHECK(out == want, what << ": wrong data");
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
  const int n = c.size();
  const int roots[] = {0, n - 1, n / 2};
  for (std::size_t count : kCounts)
    for (bool inPlace : {false, true})
      for (DataType dt : kTypes) {
        const std::vector<ReduceOp> ops = opsFor(dt);
        for (std::size_t i = 0; i < ops.size(); ++i) {
          const ReduceOp op = ops[i];
          if (set.has("allreduce")) checkAllreduce(c, set, dt, op, count, inPlace);
          if (set.has("reduce_scatter")) checkReduceScatter(c, set, dt, op, count, inPlace);
          if (set.has("reduce")) checkReduce(c, set, dt, op, count, roots[(i + count) % 3], inPlace);
        }
        if (set.has("allgather")) checkAllgather(c, set, dt, count, inPlace);
        if (set.has("broadcast"))
          for (int root : {roots[count % 3], roots[(count + 1) % 3]}) checkBroadcast(c, set, dt, count, root, inPlace);
        if (set.has("alltoall")) checkAlltoall(c, set, dt, count, inPlace);
      }
  if (set.has("alltoallv"))
    for (DataType dt : {DataType::F32, DataType::F64})
      for (int shape : {0, 1, 2})
        for (std::size_t unit : {1, 1500}) checkAlltoallv(c, dt, shape, unit);
  if (set.has("barrier")) checkBarrier(c, scratchDir);
}

// Three communicators cover every flat algorithm, and the radices 2, 3 and 4.
const AlgoSet kSets[] = {
    {"allreduce:ring,reduce_scatter:ring,allgather:ring,broadcast:knomial,reduce:knomial,alltoall:pairwise,"
     "alltoallv:pairwise,barrier:dissemination",
     2},
    {"allreduce:halving_doubling,allgather:bruck,broadcast:knomial,reduce:knomial,alltoall:bruck", 3},
    {"allreduce:recursive_doubling,broadcast:knomial,reduce:knomial", 4},
};

struct Topo {
  int ranks;
  int domainSize;              // 0: use domainIds
  std::vector<int> domainIds;  // per rank, when uneven
};

void runTopology(const Topo& topo) {
  char dirTemplate[] = "/tmp/tiercc-flat-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  JobOptions jo;
  jo.timeout = std::chrono::seconds(60);
  jo.env.push_back({"TIERCC_TIMEOUT", "30s"});
  jo.env.push_back({"TIERCC_SHM_CHUNK", "4096"});  // scratch of 4 KiB: large counts fragment
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
