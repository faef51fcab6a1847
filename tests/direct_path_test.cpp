// Which path the collectives inside one shm domain take (TierStats::scaleUpPath): zero copy on
// symmetric memory (the cost model prefers it at these sizes), cross-memory attach on ordinary
// buffers when the kernel permits it and TIERCC_PATH forces it, staged under
// TIERCC_SHM_COPY=staged; ranks that pass different counts fail alike with a clear error;
// an allocShared beyond /dev/shm's free space is a clear error that leaves nothing behind.
// One multi-process job per topology runs every part; each test reads its part's verdict.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/expect_error.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/shm_entries.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

// Above every direct threshold: 1 MiB + 12 bytes of f32, so ordinary buffers may take
// cross-memory attach too (from 1 MiB for allreduce, 256 KiB for the copies).
constexpr std::size_t kCount = (std::size_t(1) << 20) / sizeof(float) + 3;
constexpr std::uint64_t kHugeShm = std::uint64_t(64) << 30;

// Prints this rank's verdict on one part: "ok", "skip: why" or "FAILED: what" (the rank fails
// at the end). `part` returns an empty string when it ran, else why it was skipped.
void runPart(const char* name, bool& failed, const std::function<std::string()>& part) {
  std::string verdict;
  try {
    std::string skip = part();
    verdict = skip.empty() ? "ok" : "skip: " + skip;
  } catch (const std::exception& e) {
    verdict = std::string("FAILED: ") + e.what();
    failed = true;
  }
  std::printf("[part] %s: %s\n", name, verdict.c_str());
  std::fflush(stdout);
}

// The code and message of the Error f throws (fails the rank when it throws nothing).
std::pair<ErrorCode, std::string> errorFrom(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  TIERCC_CHECK(false, "expected an Error, nothing was thrown");
  return {};
}

void expectPath(Communicator& c, const char* want, const std::string& what) {
  const std::string got = c.stats().scaleUpPath;
  TIERCC_CHECK(got == want, what << " took the " << (got.empty() ? "(none)" : got) << " path, expected " << want);
}

float valueAt(int rank, std::size_t i) { return float(rank * 1000 + int(i % 997)); }

// Each collective at kCount on buffers a and b (at least (kCount + 64) floats each), checked,
// then its path compared with `want`.
void runCollectives(Communicator& c, float* a, float* b, const char* want, const std::string& kind) {
  const int n = c.size(), me = c.rank();
  for (std::size_t i = 0; i < kCount; ++i) a[i] = float(me + 1);
  c.allreduce(a, b, kCount, DataType::F32, ReduceOp::Sum);
  for (std::size_t i = 0; i < kCount; ++i)
    TIERCC_CHECK(b[i] == float(n * (n + 1) / 2), "allreduce on " << kind << " buffers: element " << i);
  expectPath(c, want, "allreduce on " + kind + " buffers");

  const std::size_t block = kCount / n + 1;
  for (std::size_t i = 0; i < block; ++i) a[i] = valueAt(me, i);
  c.allgather(a, b, block, DataType::F32);
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < block; ++i)
      TIERCC_CHECK(b[r * block + i] == valueAt(r, i), "allgather on " << kind << " buffers: block " << r);
  expectPath(c, want, "allgather on " + kind + " buffers");

  for (int j = 0; j < n; ++j)
    for (std::size_t i = 0; i < block; ++i) a[j * block + i] = valueAt(me * n + j, i);
  c.alltoall(a, b, block, DataType::F32);
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < block; ++i)
      TIERCC_CHECK(b[r * block + i] == valueAt(r * n + me, i), "alltoall on " << kind << " buffers: block " << r);
  expectPath(c, want, "alltoall on " + kind + " buffers");

  const int root = n - 1;
  for (std::size_t i = 0; i < kCount; ++i) a[i] = me == root ? valueAt(root, i) : -1.0f;
  c.broadcast(a, b, kCount, DataType::F32, root);
  for (std::size_t i = 0; i < kCount; ++i)
    TIERCC_CHECK(b[i] == valueAt(root, i), "broadcast on " << kind << " buffers: element " << i);
  expectPath(c, want, "broadcast on " + kind + " buffers");
}

// A job of `n` ranks in one domain; every part prints its verdict (see runPart).
JobResult runJob(int n) {
  JobOptions jo;
  jo.timeout = std::chrono::milliseconds(180000);
  jo.env = {{"TIERCC_DOMAIN_SIZE", std::to_string(n)}, {"TIERCC_SHM_COPY", "staged"}, {"TIERCC_TIMEOUT", "60s"}};
  return runRanks(
      n,
      [n](int rank, const std::string& store) {
        bool failed = false;
        Communicator c(store, n, rank);
        TIERCC_CHECK(c.numDomains() == 1 && c.domainSize() == n, "one domain of " << n << " ranks expected");
        const std::string prefix = shmPrefix();
        TIERCC_CHECK(!prefix.empty(), "no tiercc window segment mapped in /proc/self/maps");
        std::printf("[prefix] %s\n", prefix.c_str());
        const std::size_t capacity = (kCount + 64) * sizeof(float);
        std::vector<float> a(capacity / sizeof(float)), b(capacity / sizeof(float));

        runPart("staged", failed, [&] {
          auto* sa = static_cast<float*>(c.allocShared(capacity));
          auto* sb = static_cast<float*>(c.allocShared(capacity));
          runCollectives(c, sa, sb, "zero_copy", "symmetric");
          runCollectives(c, a.data(), b.data(), "staged", "ordinary");
          c.freeShared(sb);
          c.freeShared(sa);
          return std::string();
        });

        runPart("alloc_beyond_shm", failed, [&]() -> std::string {
          struct statvfs fs {};
          TIERCC_CHECK(statvfs("/dev/shm", &fs) == 0, "statvfs(/dev/shm): " << std::strerror(errno));
          const std::uint64_t total = std::uint64_t(fs.f_blocks) * fs.f_frsize;
          const std::uint64_t freeBytes = std::uint64_t(fs.f_bavail) * fs.f_frsize;
          if (total == 0) return "/dev/shm reports no size limit";
          if (freeBytes > kHugeShm)
            return "/dev/shm has " + std::to_string(freeBytes >> 30) + " GiB free, too much to exceed here";
          // Beyond the whole of /dev/shm (so beyond its free space): the kernel refuses it before
          // reserving a page, so the test never fills /dev/shm under other jobs.
          const std::size_t bytes = total + (std::size_t(64) << 20);
          auto [code, msg] = errorFrom([&] { c.allocShared(bytes); });
          TIERCC_CHECK(code == ErrorCode::SystemError,
                       "allocShared of " << bytes << ": " << toString(code) << ": " << msg);
          TIERCC_CHECK(contains(msg, "/dev/shm") && contains(msg, "free"),
                       "the message should say how much /dev/shm has free: " << msg);
          std::printf("[alloc] %s\n", msg.c_str());
          c.barrier();  // every rank is past its attempt
          const std::vector<std::string> left = shmEntriesOf(prefix);
          TIERCC_CHECK(left.empty(), "left in /dev/shm: " << left.front());
          // The communicator and its allocator are still in step: a later allocation works.
          auto* sa = static_cast<float*>(c.allocShared(capacity));
          auto* sb = static_cast<float*>(c.allocShared(capacity));
          runCollectives(c, sa, sb, "zero_copy", "symmetric (after the failed allocation)");
          c.freeShared(sb);
          c.freeShared(sa);
          return {};
        });

        runPart("cma", failed, [&]() -> std::string {
          // Cross-memory attach required, and forced wherever a plan can take it (the cost model
          // prefers staging for these sizes on some hosts); symmetric buffers then go zero copy
          // by price.
          setenv("TIERCC_SHM_COPY", "cma", 1);
          setenv("TIERCC_PATH", "cma", 1);
          std::optional<Communicator> split;
          try {
            split.emplace(c.split(0, rank));
          } catch (const Error& e) {
            if (e.code() == ErrorCode::NotSupported && contains(e.what(), "cross-memory attach does not work here"))
              return std::string("the kernel forbids cross-memory attach here: ") + e.what();
            throw;
          }
          runCollectives(*split, a.data(), b.data(), "cma", "ordinary");
          setenv("TIERCC_PATH", "auto", 1);
          Communicator cc = c.split(0, rank);
          auto* sa = static_cast<float*>(cc.allocShared(capacity));
          auto* sb = static_cast<float*>(cc.allocShared(capacity));
          runCollectives(cc, sa, sb, "zero_copy", "symmetric");
          cc.freeShared(sb);
          cc.freeShared(sa);
          return {};
        });

        runPart("count_mismatch", failed, [&] {
          setenv("TIERCC_SHM_COPY", "staged", 1);
          Communicator d = c.split(0, rank);  // the mismatch stops this communicator, not c
          auto* sa = static_cast<float*>(d.allocShared(capacity));
          auto* sb = static_cast<float*>(d.allocShared(capacity));
          const std::size_t count = rank == n - 1 ? kCount + 50 : kCount;
          auto [code, msg] = errorFrom([&] { d.allreduce(sa, sb, count, DataType::F32, ReduceOp::Sum); });
          TIERCC_CHECK(code == ErrorCode::InvalidArgument, "count mismatch: " << toString(code) << ": " << msg);
          const std::string names = "rank " + std::to_string(n - 1) + " passed";
          TIERCC_CHECK(contains(msg, names) && contains(msg, "every rank must pass the same count"),
                       "the message should name rank " << n - 1 << ": " << msg);
          std::printf("[mismatch] %s\n", msg.c_str());
          return std::string();
        });
        TIERCC_CHECK(!failed, "a part failed (see [part] lines)");
      },
      jo);
}

const JobResult& jobFor(int n) {
  static std::map<int, JobResult> done;
  auto it = done.find(n);
  if (it == done.end()) it = done.emplace(n, runJob(n)).first;
  return it->second;
}

// Lines of one rank's output that start with `tag` (without it).
class DirectPath : public ::testing::TestWithParam<int> {
 protected:
  // Passes when every rank says ok, skips with the reason when they say skip, fails otherwise.
  void expectPart(const std::string& part) {
    const JobResult& job = jobFor(GetParam());
    std::string skip;
    for (const RankResult& r : job.ranks) {
      std::vector<std::string> v = linesOf(r, "[part] " + part + ": ");
      ASSERT_EQ(v.size(), 1u) << "rank " << r.rank << " has no verdict on " << part << "\n" << job.report();
      if (v[0].rfind("skip: ", 0) == 0)
        skip = v[0].substr(6);
      else
        ASSERT_EQ(v[0], "ok") << "rank " << r.rank << "\n" << job.report();
    }
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
};

TEST_P(DirectPath, SymmetricBuffersZeroCopyOrdinaryStagedUnderStaged) { expectPart("staged"); }

TEST_P(DirectPath, OrdinaryBuffersCrossMemoryAttachWhereAllowed) { expectPart("cma"); }

TEST_P(DirectPath, CountMismatchIsTheSameInvalidArgumentOnEveryRank) {
  expectPart("count_mismatch");
  const JobResult& job = jobFor(GetParam());
  const std::vector<std::string> first = linesOf(job.ranks[0], "[mismatch] ");
  ASSERT_EQ(first.size(), 1u) << job.report();
  for (const RankResult& r : job.ranks) EXPECT_EQ(linesOf(r, "[mismatch] "), first) << "rank " << r.rank;
}

TEST_P(DirectPath, AllocSharedBeyondDevShmIsAClearError) {
  expectPart("alloc_beyond_shm");
  const JobResult& job = jobFor(GetParam());
  for (const RankResult& r : job.ranks)
    for (const std::string& prefix : linesOf(r, "[prefix] "))
      EXPECT_TRUE(shmEntriesOf(prefix).empty()) << "left in /dev/shm after the job: " << prefix << "*";
}

INSTANTIATE_TEST_SUITE_P(OneDomain, DirectPath, ::testing::Values(2, 3),
                         [](const ::testing::TestParamInfo<int>& p) { return std::to_string(p.param) + "Ranks"; });

}  // namespace
}  // namespace tiercc::test
