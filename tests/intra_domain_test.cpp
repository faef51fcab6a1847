// The collectives inside one scale-up domain (shm), on every path they can take: zero copy on
// symmetric memory (allocShared), cross-memory attach (single copy) and staged copies for
// ordinary buffers, and mixes of both. One multi-process job per (ranks, TIERCC_SHM_COPY) runs
// every collective x datatype x op x count x placement against an independent reference. Also
// the symmetric allocator itself: mapped by peers, unlinked at once, nothing left in /dev/shm
// even after a crash, and bad pointers rejected without changing anything.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/collective_checks.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/shm_entries.hpp"
#include "tiercc/tiercc.h"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

const DataType kTypes[] = {DataType::F32, DataType::F64, DataType::F16, DataType::BF16, DataType::I8,
                           DataType::U8,  DataType::I32, DataType::U32, DataType::I64,  DataType::U64};
const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg};
// Odd, and large enough (>= 32 KiB for every type) that the zero-copy paths run; smaller counts
// take the staged ones. runBig covers the sizes where cross-memory attach starts (256 KiB for
// copies, 1 MiB for allreduce).
constexpr std::size_t kLarge = 40009;
const std::size_t kCounts[] = {0, 1, 7, 1001, kLarge};

// The large count runs the reductions on fewer types: every element size and kind once.
bool runsAt(DataType dt, std::size_t count) {
  return count < kLarge || dt == DataType::F32 || dt == DataType::F16 || dt == DataType::I8 || dt == DataType::U64;
}

// Two regions a case may use, `capacity` bytes each: ordinary memory or symmetric memory.
struct Regions {
  std::uint8_t* a;
  std::uint8_t* b;
  const char* kind;
};

std::string name(const Regions& m, const char* coll, DataType dt, std::size_t count, bool inPlace) {
  return std::string(coll) + " " + toString(dt) + " count " + std::to_string(count) +
         (inPlace ? " in place" : " out of place") + " on " + m.kind + " buffers";
}

Buffer bytesAt(const std::uint8_t* p, std::size_t n) { return Buffer(p, p + n); }

// "byte 12 of 40: 0x33, expected 0x07" for the first difference, for the failure message.
std::string firstDifference(const Buffer& got, const Buffer& want) {
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  if (i == got.size() && i == want.size()) return "no difference";
  std::ostringstream out;
  out << "byte " << i << " of " << want.size() << ": 0x" << std::hex << (i < got.size() ? int(got[i]) : -1)
      << ", expected 0x" << (i < want.size() ? int(want[i]) : -1);
  return out.str();
}

void checkAllreduce(Communicator& c, const Regions& m, DataType dt, ReduceOp op, std::size_t count, bool inPlace) {
  const std::string what = name(m, "allreduce", dt, count, inPlace) + " " + toString(op);
  Buffer in = inputBuffer(dt, op, c.rank(), count);
  std::memcpy(m.a, in.data(), in.size());
  std::uint8_t* out = inPlace ? m.a : m.b;
  if (!inPlace) std::memset(m.b, 0x5a, in.size());
  c.allreduce(m.a, out, count, dt, op);
  checkResult(dt, op, bytesAt(out, in.size()), expectedBuffer(dt, op, c.size(), count), what);
}

void checkReduce(Communicator& c, const Regions& m, DataType dt, ReduceOp op, std::size_t count, int root,
                 bool inPlace) {
  const std::string what = name(m, "reduce", dt, count, inPlace) + " " + toString(op) + " root " + std::to_string(root);
  Buffer in = inputBuffer(dt, op, c.rank(), count);
  std::memcpy(m.a, in.data(), in.size());
  std::uint8_t* out = inPlace ? m.a : m.b;
  if (!inPlace) std::memset(m.b, 0x5a, in.size());
  c.reduce(m.a, out, count, dt, op, root);
  if (c.rank() == root)
    checkResult(dt, op, bytesAt(out, in.size()), expectedBuffer(dt, op, c.size(), count), what);
  else if (!inPlace)
    TIERCC_CHECK(bytesAt(m.b, in.size()) == Buffer(in.size(), 0x5a), what << ": a non-root receive buffer was written");
}

void checkReduceScatter(Communicator& c, const Regions& m, DataType dt, ReduceOp op, std::size_t count, bool inPlace) {
  const std::string what = name(m, "reduce_scatter", dt, count, inPlace) + " " + toString(op);
  const std::size_t es = dataTypeSize(dt), block = count * es;
  Buffer in = inputBuffer(dt, op, c.rank(), count * c.size());
  Buffer all = expectedBuffer(dt, op, c.size(), count * c.size());
  std::memcpy(m.a, in.data(), in.size());
  std::uint8_t* out = inPlace ? m.a + c.rank() * block : m.b;
  if (!inPlace) std::memset(m.b, 0x5a, block);
  c.reduceScatter(m.a, out, count, dt, op);
  checkResult(dt, op, bytesAt(out, block), Buffer(all.begin() + c.rank() * block, all.begin() + (c.rank() + 1) * block),
              what);
}

void checkAllgather(Communicator& c, const Regions& m, DataType dt, std::size_t count, bool inPlace) {
  const std::string what = name(m, "allgather", dt, count, inPlace);
  const std::size_t block = count * dataTypeSize(dt);
  Buffer want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, r, 0);
    want.insert(want.end(), b.begin(), b.end());
  }
  Buffer mine = pattern(dt, count, c.rank(), 0);
  std::memset(m.b, 0x33, want.size());
  if (inPlace) {
    std::memcpy(m.b + c.rank() * block, mine.data(), block);
    c.allgather(m.b + c.rank() * block, m.b, count, dt);
  } else {
    std::memcpy(m.a, mine.data(), block);
    c.allgather(m.a, m.b, count, dt);
  }
  TIERCC_CHECK(bytesAt(m.b, want.size()) == want,
               what << ": wrong data, " << firstDifference(bytesAt(m.b, want.size()), want));
}

void checkAlltoall(Communicator& c, const Regions& m, DataType dt, std::size_t count, bool inPlace) {
  const std::string what = name(m, "alltoall", dt, count, inPlace);
  Buffer in, want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, c.rank(), r), w = pattern(dt, count, r, c.rank());
    in.insert(in.end(), b.begin(), b.end());
    want.insert(want.end(), w.begin(), w.end());
  }
  std::memcpy(m.a, in.data(), in.size());
  std::uint8_t* out = inPlace ? m.a : m.b;
  if (!inPlace) std::memset(m.b, 0x55, in.size());
  c.alltoall(m.a, out, count, dt);
  TIERCC_CHECK(bytesAt(out, want.size()) == want,
               what << ": wrong data, " << firstDifference(bytesAt(out, want.size()), want));
}

void checkBroadcast(Communicator& c, const Regions& m, DataType dt, std::size_t count, int root, bool inPlace) {
  const std::string what = name(m, "broadcast", dt, count, inPlace) + " root " + std::to_string(root);
  Buffer want = pattern(dt, count, root, root);
  std::memset(m.a, 0x11, want.size());
  std::memset(m.b, 0x22, want.size());
  if (c.rank() == root) std::memcpy(inPlace ? m.b : m.a, want.data(), want.size());
  c.broadcast(inPlace ? m.b : (c.rank() == root ? m.a : nullptr), m.b, count, dt, root);
  TIERCC_CHECK(bytesAt(m.b, want.size()) == want,
               what << ": wrong data, " << firstDifference(bytesAt(m.b, want.size()), want));
}

void runCases(Communicator& c, const Regions& m) {
  const int roots[] = {0, c.size() - 1, c.size() / 2};
  for (std::size_t count : kCounts)
    for (bool inPlace : {false, true})
      for (DataType dt : kTypes) {
        checkBroadcast(c, m, dt, count, roots[count % 3], inPlace);
        checkAllgather(c, m, dt, count, inPlace);
        checkAlltoall(c, m, dt, count, inPlace);
        if (!runsAt(dt, count)) continue;
        for (ReduceOp op : kOps) {
          checkAllreduce(c, m, dt, op, count, inPlace);
          checkReduce(c, m, dt, op, count, roots[(count + static_cast<std::size_t>(op)) % 3], inPlace);
          checkReduceScatter(c, m, dt, op, count, inPlace);
        }
      }
}

// Just above the sizes where ordinary buffers switch to cross-memory attach: allreduce at 1 MiB
// and more (every op), allgather, all-to-all and broadcast at 256 KiB and more.
void runBig(Communicator& c, const Regions& m) {
  for (DataType dt : {DataType::F32, DataType::F16, DataType::I8, DataType::U64}) {
    const std::size_t count = (std::size_t(1) << 20) / dataTypeSize(dt) + 3, block = count / c.size() + 1;
    for (bool inPlace : {false, true}) {
      for (ReduceOp op : kOps) checkAllreduce(c, m, dt, op, count, inPlace);
      checkAllgather(c, m, dt, block, inPlace);
      checkAlltoall(c, m, dt, block, inPlace);
      checkBroadcast(c, m, dt, count, c.size() / 2, inPlace);
    }
  }
}

// Ranks disagree on the kind of buffer (rank 0 ordinary, the others symmetric): they must
// still agree on one path.
void runMixed(Communicator& c, const Regions& ordinary, const Regions& symmetric) {
  const Regions& m = c.rank() == 0 ? ordinary : symmetric;
  Regions mixed{m.a, m.b, "mixed"};
  for (bool inPlace : {false, true}) {
    checkAllreduce(c, mixed, DataType::F32, ReduceOp::Sum, kLarge, inPlace);
    checkAllgather(c, mixed, DataType::F32, kLarge, inPlace);
    checkAlltoall(c, mixed, DataType::F32, kLarge, inPlace);
    checkBroadcast(c, mixed, DataType::F32, kLarge, c.size() - 1, inPlace);
    checkReduce(c, mixed, DataType::F32, ReduceOp::Sum, kLarge, 0, inPlace);
    checkReduceScatter(c, mixed, DataType::F32, ReduceOp::Sum, kLarge, inPlace);
  }
}

// 64 MiB allreduce (f32 sum), on symmetric memory: once, in one job.
void runHuge(Communicator& c) {
  const std::size_t count = std::size_t(16) << 20, bytes = count * sizeof(float);
  auto* send = static_cast<float*>(c.allocShared(bytes));
  auto* recv = static_cast<float*>(c.allocShared(bytes));
  for (std::size_t i = 0; i < count; ++i) send[i] = float(inputValue(ReduceOp::Sum, c.rank(), i));
  c.allreduce(send, recv, count, DataType::F32, ReduceOp::Sum);
  for (std::size_t i = 0; i < count; ++i)
    TIERCC_CHECK(recv[i] == float(expectedValue(ReduceOp::Sum, c.size(), i)), "64 MiB allreduce: element " << i);
  c.freeShared(recv);
  c.freeShared(send);
}

struct Case {
  int ranks;
  const char* copy;  // TIERCC_SHM_COPY
};

class IntraDomain : public ::testing::TestWithParam<Case> {};

TEST_P(IntraDomain, EveryCollectiveOnEveryPath) {
  const Case tc = GetParam();
  JobOptions jo;
  jo.timeout = std::chrono::milliseconds(240000);
  jo.env = {{"TIERCC_DOMAIN_SIZE", std::to_string(tc.ranks)}, {"TIERCC_SHM_COPY", tc.copy}, {"TIERCC_TIMEOUT", "120s"}};
  JobResult result = runRanks(
      tc.ranks,
      [&](int rank, const std::string& store) {
        Communicator c(store, tc.ranks, rank);
        TIERCC_CHECK(c.numDomains() == 1, "one domain expected");
        const std::size_t capacity =
            std::max<std::size_t>(kLarge * 8 * tc.ranks, (std::size_t(1) << 20) + 64 * tc.ranks);
        Buffer a(capacity), b(capacity);
        auto* sa = static_cast<std::uint8_t*>(c.allocShared(capacity));
        auto* sb = static_cast<std::uint8_t*>(c.allocShared(capacity));
        Regions ordinary{a.data(), b.data(), "ordinary"}, symmetric{sa, sb, "symmetric"};
        runCases(c, ordinary);
        runCases(c, symmetric);
        runBig(c, ordinary);
        runBig(c, symmetric);
        if (tc.ranks > 1) runMixed(c, ordinary, symmetric);
        if (tc.ranks == 3 && std::string(tc.copy) == "cma") runHuge(c);
        c.freeShared(sa);
        c.freeShared(sb);
      },
      jo);
  if (!result.ok() && contains(result.report(), "cross-memory attach does not work here"))
    GTEST_SKIP() << "the kernel forbids cross-memory attach here: " << result.report();
  EXPECT_TRUE(result.ok()) << result.report();
}

INSTANTIATE_TEST_SUITE_P(OneDomain, IntraDomain,
                         ::testing::Values(Case{1, "cma"}, Case{2, "cma"}, Case{3, "cma"}, Case{4, "cma"},
                                           Case{7, "cma"}, Case{1, "staged"}, Case{2, "staged"}, Case{3, "staged"},
                                           Case{4, "staged"}, Case{7, "staged"}),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return std::to_string(param.param.ranks) + "Ranks_" + param.param.copy;
                         });

// A broadcast's root (a reduce's other ranks) writes fast box after fast box without waiting
// for its readers, until it would reuse a slot a reader may not have read: 256, 128, 64, 32, 16
// or 8 of them, by the input's size (exec/one_shot.cpp). Readers here stop now and then for a
// millisecond, so that the writers reach that limit over and over, and every call's data differs
// (a box overwritten before its reader read it shows as another call's values). Each input size
// runs calls whose roles change every call, then a broadcast run and a reduce run, each longer
// than the most slots, with its own root; an allreduce between the sizes stages in the boxes too
// (64 B slots), and 600 B goes through the window's halves.
TEST(IntraDomainFastBoxes, AWriterRunningAheadNeverOverwritesAnUnreadBox) {
  constexpr int kRanks = 3, kRun = 320;
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", std::to_string(kRanks)}, {"TIERCC_TIMEOUT", "60s"}};
  JobResult result = runRanks(
      kRanks,
      [&](int rank, const std::string& store) {
        Communicator c(store, kRanks, rank);
        auto value = [](int call, int r, std::size_t i) { return std::uint32_t(call * 7919 + r * 104729 + i); };
        // 8, 24, 56, 120, 248 and 568 B fill a 16, 32, 64, 128, 256 and 576 B slot; 600 B does
        // not fit one.
        const std::size_t counts[] = {2, 6, 14, 30, 62, 142, 150, 2};
        std::vector<std::uint32_t> in(150), out(150);
        // One call, its result checked; `pause`: this rank, if it reads, stops first.
        auto run = [&](int call, std::size_t count, bool reduce, int root, bool pause) {
          const bool reader = reduce ? rank == root : rank != root;
          if (reader && pause) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          for (std::size_t j = 0; j < count; ++j) in[j] = value(call, rank, j);
          std::fill(out.begin(), out.end(), 0xdeadbeef);
          if (reduce) {
            c.reduce(in.data(), out.data(), count, DataType::U32, ReduceOp::Sum, root);
            for (std::size_t j = 0; j < count && rank == root; ++j) {
              std::uint32_t want = 0;
              for (int r = 0; r < kRanks; ++r) want += value(call, r, j);
              TIERCC_CHECK(out[j] == want, "reduce #" << call << " (root " << root << ", " << count * 4
                                                      << " B): element " << j << " is " << out[j] << ", expected "
                                                      << want);
            }
          } else {
            c.broadcast(in.data(), out.data(), count, DataType::U32, root);
            for (std::size_t j = 0; j < count; ++j)
              TIERCC_CHECK(out[j] == value(call, root, j),
                           "broadcast #" << call << " (root " << root << ", " << count * 4 << " B): element " << j
                                         << " is " << out[j] << ", expected " << value(call, root, j));
          }
          TIERCC_CHECK(c.stats().algorithm == "one_shot", (reduce ? "reduce" : "broadcast")
                                                              << " #" << call << " ran " << c.stats().algorithm);
        };
        int call = 0;
        for (std::size_t count : counts) {
          // Right after the allreduce (another slot size: the boxes start afresh), roles change
          // every call: a writer's first box is read by ranks that read nothing the call before.
          for (int i = 0; i < 30; ++i, ++call) run(call, count, i % 2 == 1, i % kRanks, false);
          for (bool reduce : {false, true}) {
            const int root = call / kRun % kRanks;
            for (int i = 0; i < kRun; ++i, ++call) run(call, count, reduce, root, i % 50 == 7);
          }
          std::uint32_t one = 1, sum = 0;
          c.allreduce(&one, &sum, 1, DataType::U32, ReduceOp::Sum);
          TIERCC_CHECK(sum == kRanks, "allreduce after call #" << call << ": " << sum);
        }
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

// The line of /proc/self/maps that maps address p, or "" when nothing does.
std::string mappingOf(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) return line;
  }
  return {};
}

// Nothing of a job is left in /dev/shm: its ranks print their segment prefixes (other tests may
// be creating segments of their own meanwhile), and the parent looks for those names.
void expectNothingLeft(const JobResult& job) {
  bool sawPrefix = false;
  const std::string left = leftInDevShm(job, sawPrefix);
  EXPECT_TRUE(sawPrefix) << "no rank reported its segment prefix\n" << job.report();
  EXPECT_EQ(left, "") << "left in /dev/shm";
}

TEST(IntraDomainMemory, VisibleToPeersUnlinkedAtOnceAndFreed) {
  JobResult result = runRanks(3, [](int rank, const std::string& store) {
    Communicator c(store, 3, rank);
    const std::size_t block = 64 * 1024 + 3;
    auto* p = static_cast<std::uint8_t*>(c.allocShared(3 * block));
    TIERCC_CHECK(reinterpret_cast<std::uintptr_t>(p) % 4096 == 0, "not page-aligned");
    TIERCC_CHECK(bytesAt(p, 3 * block) == Buffer(3 * block, 0), "not zero-filled");
    printShmPrefixes();
    const std::string line = mappingOf(p);
    TIERCC_CHECK(contains(line, "/dev/shm/tiercc-") && contains(line, "(deleted)"),
                 "the allocation's name should be gone once every peer mapped it: " << line);
    // Each rank writes its block in its own copy; a zero-copy allgather makes them visible.
    std::memset(p + rank * block, 0x10 + rank, block);
    c.allgather(p + rank * block, p, block, DataType::U8);
    for (int r = 0; r < 3; ++r)
      TIERCC_CHECK(bytesAt(p + r * block, block) == Buffer(block, std::uint8_t(0x10 + r)), "block of rank " << r);
    c.freeShared(p);
    TIERCC_CHECK(mappingOf(p).empty() || !contains(mappingOf(p), "tiercc-"), "still mapped after freeShared");
  });
  EXPECT_TRUE(result.ok()) << result.report();
  expectNothingLeft(result);
}

TEST(IntraDomainMemory, NothingLeftBehindWhenARankCrashes) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "5s"}};
  JobResult result = runRanks(
      3,
      [](int rank, const std::string& store) {
        Communicator c(store, 3, rank);
        void* p = c.allocShared(1 << 20);
        std::memset(p, 1, 1 << 20);
        printShmPrefixes();
        if (rank == 2) abort();  // crash with the allocation mapped, without any cleanup
      },
      jo);
  EXPECT_TRUE(result.ranks[0].ok() && result.ranks[1].ok()) << result.report();
  expectNothingLeft(result);
}

TEST(IntraDomainMemory, BadInputIsAClearErrorAndChangesNothing) {
  JobResult result = runRanks(2, [](int rank, const std::string& store) {
    Communicator c(store, 2, rank);
    auto expect = [&](auto f, const char* words) {
      std::string msg = errorOf(f, ErrorCode::InvalidArgument);
      TIERCC_CHECK(contains(msg, words), "message '" << msg << "' should say '" << words << "'");
    };
    expect([&] { c.allocShared(0); }, "size 0");
    expect([&] { c.allocShared(rank == 0 ? 4096 : 8192); }, "disagree on the size");
    auto* p = static_cast<float*>(c.allocShared(1 << 16));
    int onStack = 0;
    expect([&] { c.freeShared(&onStack); }, "not a pointer returned by allocShared");
    expect([&] { c.freeShared(p + 1); }, "nothing was freed");
    expect([&] { c.freeShared(nullptr); }, "not a pointer returned by allocShared");
    // The allocation survived the bad calls: still usable, zero copy.
    for (int i = 0; i < (1 << 14); ++i) p[i] = float(rank + 1);
    c.allreduce(p, p, 1 << 14, DataType::F32, ReduceOp::Sum);
    TIERCC_CHECK(p[0] == 3.0f && p[(1 << 14) - 1] == 3.0f, "allreduce after the bad calls");
    c.freeShared(p);
    expect([&] { c.freeShared(p); }, "freed already");
    // The C ABI: codes and the last error.
    tiercc_comm_t cc = nullptr;
    TIERCC_CHECK(tiercc_comm_init_rank(&cc, store.c_str(), 2, rank) == tiercc_success, tiercc_get_last_error());
    void* q = nullptr;
    TIERCC_CHECK(tiercc_mem_alloc(cc, 0, &q) == tiercc_invalid_argument && q == nullptr, "tiercc_mem_alloc of 0");
    TIERCC_CHECK(tiercc_mem_alloc(cc, 4096, nullptr) == tiercc_invalid_argument, "NULL output pointer");
    TIERCC_CHECK(tiercc_mem_alloc(cc, 1 << 20, &q) == tiercc_success && q, tiercc_get_last_error());
    printShmPrefixes();
    TIERCC_CHECK(tiercc_mem_free(cc, &onStack) == tiercc_invalid_argument, "tiercc_mem_free of a stack pointer");
    TIERCC_CHECK(contains(tiercc_get_last_error(), "not a pointer returned by allocShared"), tiercc_get_last_error());
    TIERCC_CHECK(tiercc_mem_free(cc, q) == tiercc_success, tiercc_get_last_error());
    TIERCC_CHECK(tiercc_comm_destroy(cc) == tiercc_success, tiercc_get_last_error());
  });
  EXPECT_TRUE(result.ok()) << result.report();
  expectNothingLeft(result);
}

}  // namespace
}  // namespace tiercc::test
