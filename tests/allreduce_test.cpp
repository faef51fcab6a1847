// Allreduce across topologies: each test is one multi-process job that runs the whole matrix
// (every datatype x op x count, in place and out of place, C++ API and C ABI) inside it,
// checked against an independent reference. Back-to-back calls reuse buffers on purpose.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/collective_reference.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/tiercc.h"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

const DataType kTypes[] = {DataType::F32, DataType::F64, DataType::F16, DataType::BF16, DataType::I8,
                           DataType::U8,  DataType::I32, DataType::U32, DataType::I64,  DataType::U64};
const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg};

struct MatrixOptions {
  std::vector<std::size_t> counts;
  bool viaCApi = false;
};

// Runs every datatype x op x count x placement on an initialised communicator.
void runMatrix(Communicator& comm, tiercc_comm_t ccomm, const MatrixOptions& opt) {
  const int n = comm.size();
  for (DataType dt : kTypes)
    for (ReduceOp op : kOps)
      for (std::size_t count : opt.counts)
        for (bool inPlace : {false, true}) {
          std::string what = std::string("allreduce ") + toString(dt) + " " + toString(op) + " count " +
                             std::to_string(count) + (inPlace ? " in place" : " out of place");
          std::vector<std::uint8_t> in = inputBuffer(dt, op, comm.rank(), count);
          std::vector<std::uint8_t> out(in.size() + 1, 0xab);  // one guard byte past the end
          const void* send = in.data();
          void* recv = out.data();
          if (inPlace) {
            std::memcpy(out.data(), in.data(), in.size());
            send = recv;
          }
          if (opt.viaCApi) {
            tiercc_result_t r = tiercc_allreduce(send, recv, count, static_cast<tiercc_datatype_t>(dt),
                                                 static_cast<tiercc_redop_t>(op), ccomm);
            TIERCC_CHECK(r == tiercc_success, what << ": " << tiercc_get_last_error());
          } else {
            comm.allreduce(send, recv, count, dt, op);
          }
          TIERCC_CHECK(out.back() == 0xab, what << ": wrote past the end of the receive buffer");
          out.pop_back();
          checkResult(dt, op, out, expectedBuffer(dt, op, n, count), what);
        }
}

struct Layout {
  const char* name;
  int ranks;
  std::vector<int> domainIds;  // empty: one domain per host unless domainSize is set
  int domainSize = 0;
};

void runLayout(const Layout& layout, const std::vector<std::pair<std::string, std::string>>& env,
               const MatrixOptions& opt) {
  JobOptions jo;
  jo.env = env;
  jo.env.push_back({"TIERCC_TIMEOUT", "60s"});
  if (layout.domainSize) jo.env.push_back({"TIERCC_DOMAIN_SIZE", std::to_string(layout.domainSize)});
  if (!layout.domainIds.empty())
    jo.rankEnv = [&](int r) {
      return std::vector<std::pair<std::string, std::string>>{{"TIERCC_DOMAIN_ID", std::to_string(layout.domainIds[r])}};
    };
  JobResult result = runRanks(layout.ranks, [&](int rank, const std::string& store) {
    tiercc_comm_t ccomm = nullptr;
    if (opt.viaCApi) {
      TIERCC_CHECK(tiercc_comm_init_rank(&ccomm, store.c_str(), layout.ranks, rank) == tiercc_success,
                   tiercc_get_last_error());
      // The C handle and a C++ communicator share the job's store under different names.
    }
    Communicator comm(store, layout.ranks, rank);
    runMatrix(comm, ccomm, opt);
    if (ccomm) TIERCC_CHECK(tiercc_comm_destroy(ccomm) == tiercc_success, tiercc_get_last_error());
  }, jo);
  EXPECT_TRUE(result.ok()) << layout.name << "\n" << result.report();
}

const MatrixOptions kSmallCounts{{0, 1, 7, 1001}, false};

TEST(Allreduce, OneRank) { runLayout({"1x1", 1, {}, 0}, {}, kSmallCounts); }
TEST(Allreduce, TwoDomainsOfOne) { runLayout({"2x1", 2, {}, 1}, {}, kSmallCounts); }
TEST(Allreduce, ThreeRanksUnevenDomains) { runLayout({"2+1", 3, {7, 7, 3}, 0}, {}, kSmallCounts); }
TEST(Allreduce, FiveRanksDomainsOfTwo) { runLayout({"2+2+1", 5, {}, 2}, {}, kSmallCounts); }
TEST(Allreduce, EightRanksTwoDomainsOfFour) { runLayout({"2x4", 8, {}, 4}, {}, kSmallCounts); }
TEST(Allreduce, FiveRanksDomainsOfTwoOverUcx) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ucx");
  runLayout({"2+2+1", 5, {}, 2}, {{"TIERCC_TRANSPORT", "ucx"}}, kSmallCounts);
}
TEST(Allreduce, OneDomainOfFour) { runLayout({"1x4", 4, {}, 0}, {}, kSmallCounts); }
// The same small counts through reduce-scatter + allgather instead of one-shot.
const std::vector<std::pair<std::string, std::string>> kTwoShot{{"TIERCC_ALLREDUCE_ONESHOT_BYTES", "0"}};
TEST(Allreduce, TwoShotTwoDomainsOfFour) { runLayout({"2x4", 8, {}, 4}, kTwoShot, kSmallCounts); }
TEST(Allreduce, TwoShotOneDomainOfThree) { runLayout({"1x3", 3, {}, 0}, kTwoShot, kSmallCounts); }

// A window of 4 KiB forces many rounds per call: chunking, epochs and slice edges.
TEST(Allreduce, ManyRoundsSmallWindow) {
  runLayout({"2x2", 4, {}, 2}, {{"TIERCC_SHM_CHUNK", "4096"}}, {{1, 1023, 5000}, false});
}

// One-shot rounds (fast boxes in the mailbox, window halves) between rounds of other algorithms
// on the same windows: each call's inputs differ, so data left from an earlier round shows.
void runMixedRounds(const Layout& layout, const std::vector<std::pair<std::string, std::string>>& env) {
  JobOptions jo;
  jo.env = env;
  jo.env.push_back({"TIERCC_TIMEOUT", "60s"});
  if (layout.domainSize) jo.env.push_back({"TIERCC_DOMAIN_SIZE", std::to_string(layout.domainSize)});
  JobResult result = runRanks(
      layout.ranks,
      [&](int rank, const std::string& store) {
        Communicator comm(store, layout.ranks, rank);
        const int n = comm.size();
        const std::size_t counts[] = {2, 128, 300, 100000};  // fast box, fast box, window, large
        std::vector<std::int32_t> in, out;
        // One-shot allgather and all-to-all between the others: fast box and window, in place.
        auto gathers = [&](int it, int kind) {
          const bool toAll = kind >= 8;
          const std::size_t count = kind % 2 ? 300 : 2;
          std::vector<std::int32_t> buf(count * n, -1);
          auto value = [&](int from, int to, std::size_t i) {
            return it * 100000 + from * 1000 + to * 10 + int(i % 7);
          };
          for (std::size_t i = 0; i < count; ++i)
            for (int to = 0; to < n; ++to)
              if (toAll)
                buf[to * count + i] = value(rank, to, i);
              else if (to == rank)
                buf[to * count + i] = value(rank, 0, i);
          // Either collective reads its input at buf (the allgather its own block of it).
          auto call = [&](std::int32_t* to) {
            if (toAll)
              comm.alltoall(buf.data(), to, count, DataType::I32);
            else
              comm.allgather(buf.data() + rank * count, to, count, DataType::I32);
          };
          if (it % 2) {  // in place on odd calls
            call(buf.data());
          } else {
            out.assign(count * n, -1);
            call(out.data());
            buf = out;
          }
          for (int from = 0; from < n; ++from)
            for (std::size_t i = 0; i < count; ++i) {
              const std::int32_t want = value(from, toAll ? rank : 0, i);
              TIERCC_CHECK(buf[from * count + i] == want,
                           "call " << it << (toAll ? " alltoall" : " allgather") << " count " << count << " block "
                                   << from << " element " << i << " = " << buf[from * count + i] << ", expected "
                                   << want << " (" << comm.stats().algorithm << ")");
            }
        };
        // One-shot broadcasts and reduces, three of each in a row (the ranks that stage may run a
        // call ahead): a root, then the next rank twice; fast box or window, in place or not.
        auto rooted = [&](int it, int kind) {
          const std::size_t count = kind == 10 ? 2 : 300;
          for (int b = 0; b < 3; ++b) {
            const int root = (it + (b > 0 ? 1 : 0)) % n;
            auto value = [&](std::size_t i) { return it * 1000 + b * 100 + root * 10 + int(i % 7); };
            std::vector<std::int32_t> buf(count, -1), dst(count, -1);
            if (rank == root)
              for (std::size_t i = 0; i < count; ++i) buf[i] = value(i);
            const bool inPlace = (it + b) % 2;
            comm.broadcast(buf.data(), inPlace ? buf.data() : dst.data(), count, DataType::I32, root);
            const std::vector<std::int32_t>& got = inPlace ? buf : dst;
            for (std::size_t i = 0; i < count; ++i)
              TIERCC_CHECK(got[i] == value(i), "call " << it << " broadcast " << b << " from " << root << " count "
                                                       << count << " element " << i << " = " << got[i] << ", expected "
                                                       << value(i) << " (" << comm.stats().algorithm << ")");
          }
          for (int b = 0; b < 3; ++b) {
            const int root = (it + (b > 0 ? 1 : 0)) % n;
            std::vector<std::int32_t> buf(count), dst(count, -1);
            for (std::size_t i = 0; i < count; ++i) buf[i] = it * 100 + b * 10 + rank + int(i % 5);
            const bool inPlace = (it + b) % 2;
            comm.reduce(buf.data(), inPlace ? buf.data() : dst.data(), count, DataType::I32, ReduceOp::Sum, root);
            if (rank != root) continue;
            const std::vector<std::int32_t>& got = inPlace ? buf : dst;
            for (std::size_t i = 0; i < count; ++i) {
              const std::int32_t want = n * (it * 100 + b * 10 + int(i % 5)) + n * (n - 1) / 2;
              TIERCC_CHECK(got[i] == want, "call " << it << " reduce " << b << " to " << root << " count " << count
                                                   << " element " << i << " = " << got[i] << ", expected " << want
                                                   << " (" << comm.stats().algorithm << ")");
            }
          }
        };
        // One-shot reduce-scatters, in place on odd calls: fast box (2 elements per block) or window.
        auto reduceScatter = [&](int it, int kind) {
          const std::size_t count = kind == 12 ? 2 : 300;
          std::vector<std::int32_t> buf(count * n), dst(count, -1);
          for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = it * 1000 + rank * 10 + int(i % 9);
          const bool inPlace = it % 2;
          std::int32_t* to = inPlace ? buf.data() + rank * count : dst.data();
          comm.reduceScatter(buf.data(), to, count, DataType::I32, ReduceOp::Sum);
          for (std::size_t i = 0; i < count; ++i) {
            const std::int32_t want = n * (it * 1000 + int((rank * count + i) % 9)) + 10 * n * (n - 1) / 2;
            TIERCC_CHECK(to[i] == want, "call " << it << " reduce-scatter count " << count << " element " << i << " = "
                                                << to[i] << ", expected " << want << " (" << comm.stats().algorithm
                                                << ")");
          }
        };
        for (int it = 0; it < 300; ++it) {
          const int kind = (it * 5) % 14;
          if (kind >= 12) {
            reduceScatter(it, kind);
            continue;
          }
          if (kind >= 10) {
            rooted(it, kind);
            continue;
          }
          if (kind >= 6) {
            gathers(it, kind);
            continue;
          }
          if (kind < 4) {
            const std::size_t count = counts[kind];
            in.assign(count, 0);
            out.assign(count, -1);
            for (std::size_t i = 0; i < count; ++i) in[i] = static_cast<std::int32_t>(it * 1000 + rank + i % 13);
            comm.allreduce(in.data(), out.data(), count, DataType::I32, ReduceOp::Sum);
            for (std::size_t i = 0; i < count; ++i) {
              const std::int32_t want = n * static_cast<std::int32_t>(it * 1000 + i % 13) + n * (n - 1) / 2;
              TIERCC_CHECK(out[i] == want, "call " << it << " allreduce count " << count << " element " << i << " = "
                                                   << out[i] << ", expected " << want);
            }
          } else if (kind == 4) {
            in.assign(3, it * 10 + rank);
            out.assign(3 * n, -1);
            comm.allgather(in.data(), out.data(), 3, DataType::I32);
            for (int r = 0; r < n; ++r)
              TIERCC_CHECK(out[3 * r] == it * 10 + r, "call " << it << " allgather block " << r << " = " << out[3 * r]);
          } else {
            comm.barrier();
          }
        }
      },
      jo);
  EXPECT_TRUE(result.ok()) << layout.name << "\n" << result.report();
}

TEST(Allreduce, OneShotBetweenOtherAlgorithms) {
  runMixedRounds({"1x4", 4, {}, 0}, {});
  runMixedRounds({"1x2", 2, {}, 0}, {});
  runMixedRounds({"2x2", 4, {}, 2}, {});
  runMixedRounds({"1x3 emulated", 3, {}, 0}, {{"TIERCC_SCALEUP", "emulated"}});
}

TEST(Allreduce, CApiTwoDomainsOfTwo) { runLayout({"2x2", 4, {}, 2}, {}, {{0, 1, 1001}, true}); }

// Large messages over both tiers; also checks that the slow tier carries exactly the bound.
TEST(Allreduce, LargeAndAtTheBound) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "2"}, {"TIERCC_TIMEOUT", "60s"}};
  JobResult result = runRanks(4, [](int rank, const std::string& store) {
    Communicator comm(store, 4, rank);
    const std::size_t count = (16u << 20) / 4 + 4;  // 16 MiB of f32, divisible by k*D
    std::vector<float> in(count), out(count);
    for (std::size_t i = 0; i < count; ++i) in[i] = float((i + rank) % 1000);
    TierStats before = comm.stats();
    comm.allreduce(in.data(), out.data(), count, DataType::F32, ReduceOp::Sum);
    TierStats after = comm.stats();
    for (std::size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int r = 0; r < 4; ++r) want += float((i + r) % 1000);
      TIERCC_CHECK(out[i] == want, "element " << i << " = " << out[i] << ", expected " << want);
    }
    std::uint64_t sent = after.scaleOutBytes - before.scaleOutBytes;
    std::uint64_t bound = after.scaleOutBoundBytes - before.scaleOutBoundBytes;
    // D = 2, k = 2: each rank's share of the bound is 2(D-1)/D * S / k = S / 2.
    TIERCC_CHECK(bound == count * 4 / 2, "bound share " << bound);
    TIERCC_CHECK(sent == bound, "sent " << sent << " scale-out bytes, bound share is " << bound);
    // Back-to-back in-place calls on the same buffer.
    for (int it = 0; it < 3; ++it) comm.allreduce(out.data(), out.data(), 1000, DataType::F32, ReduceOp::Max);
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(Allreduce, AsyncWorkCompletesInOrder) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "2"}};
  JobResult result = runRanks(4, [](int rank, const std::string& store) {
    Communicator comm(store, 4, rank);
    std::vector<std::int32_t> a(1000, rank), b(1000, 1), ra(1000), rb(1000);
    Work w1 = comm.allreduceAsync(a.data(), ra.data(), a.size(), DataType::I32, ReduceOp::Sum);
    Work w2 = comm.allreduceAsync(b.data(), rb.data(), b.size(), DataType::I32, ReduceOp::Sum);
    w2.wait(std::chrono::seconds(30));
    TIERCC_CHECK(w1.test(), "an earlier collective finished after a later one");
    for (int i = 0; i < 1000; ++i) TIERCC_CHECK(ra[i] == 6 && rb[i] == 4, "wrong async result at " << i);
    comm.barrier();
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(Allreduce, SplitIntoRailsAndDomains) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "2"}};
  JobResult result = runRanks(4, [](int rank, const std::string& store) {
    Communicator comm(store, 4, rank);
    Communicator rail = comm.split(comm.localRank(), comm.rank());
    TIERCC_CHECK(rail.size() == 2 && rail.numDomains() == 2 && rail.domainSize() == 1, "rail split topology");
    Communicator dom = comm.split(comm.domain(), comm.rank());
    TIERCC_CHECK(dom.size() == 2 && dom.numDomains() == 1, "domain split topology");
    Communicator none = comm.split(-1, 0);
    TIERCC_CHECK(!none.valid(), "negative color must give an empty communicator");
    std::int64_t v = rank, sum = 0;
    rail.allreduce(&v, &sum, 1, DataType::I64, ReduceOp::Sum);
    TIERCC_CHECK(sum == (rank % 2) * 2 + 2, "rail sum " << sum);
    dom.allreduce(&v, &sum, 1, DataType::I64, ReduceOp::Sum);
    TIERCC_CHECK(sum == (rank / 2) * 4 + 1, "domain sum " << sum);
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
