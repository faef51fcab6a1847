// Ranks that call different things: another count, datatype, op or root, or another collective.
// The call stamps (exec/call_stamp.hpp) and the fingerprint in message tags make the first
// exchange between them raise InvalidArgument, and the failure verdict carries it to every rank:
// no rank computes garbage or waits out its deadline. Inside a domain (staged and one-shot) and
// across domains (the transport's tag check).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/multiprocess.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

using Clock = std::chrono::steady_clock;

// Every rank runs `call` (which differs on `odd`), which must fail with InvalidArgument within
// `limit` (well before TIERCC_TIMEOUT, `timeout`, unless said otherwise) saying `needle`, over
// `transport` (null: the default); the receive buffer is not checked: the call failed midway.
void everyRankRefuses(int ranks, int domainSize, int odd, const std::string& needle,
                      const std::function<void(Communicator&, bool odd)>& call, const char* timeout = "30s",
                      std::chrono::seconds limit = std::chrono::seconds(5), const char* transport = nullptr) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", std::to_string(domainSize)},
            {"TIERCC_TIMEOUT", timeout},
            {"TIERCC_HEARTBEAT_PERIOD", "100ms"},
            {"TIERCC_DEBUG", "NONE"}};
  if (transport) jo.env.push_back({"TIERCC_TRANSPORT", transport});
  jo.timeout = std::chrono::seconds(60);
  JobResult result = runRanks(
      ranks,
      [&, limit](int rank, const std::string& store) {
        Communicator comm(store, ranks, rank);
        comm.barrier();
        const auto start = Clock::now();
        try {
          call(comm, rank == odd);
          TIERCC_CHECK(false, "the mismatched call succeeded");
        } catch (const Error& e) {
          const std::string what = e.what();
          TIERCC_CHECK(e.code() == ErrorCode::InvalidArgument, toString(e.code()) << ": " << what);
          TIERCC_CHECK(what.find(needle) != std::string::npos, "does not say '" << needle << "': " << what);
          TIERCC_CHECK(Clock::now() - start < limit, "took too long: " << what);
        }
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

const std::string kSame = "every rank must call the same collectives";

TEST(CallMismatch, CountInsideADomainStaged) {
  everyRankRefuses(4, 4, 2, kSame, [](Communicator& c, bool odd) {
    std::vector<float> buf(1 << 16, 1.0f);
    c.allreduce(buf.data(), buf.data(), odd ? buf.size() : buf.size() / 2, DataType::F32, ReduceOp::Sum);
  });
}

TEST(CallMismatch, OpInsideADomainOneShot) {
  everyRankRefuses(4, 4, 1, kSame, [](Communicator& c, bool odd) {
    std::vector<float> buf(16, 1.0f);
    for (int i = 0; i < 3; ++i)  // the fast boxes' polling path after the first call
      c.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, odd && i == 2 ? ReduceOp::Max : ReduceOp::Sum);
  });
}

TEST(CallMismatch, CollectiveInsideADomain) {
  everyRankRefuses(2, 2, 1, kSame, [](Communicator& c, bool odd) {
    std::vector<float> buf(4096, 1.0f);
    if (odd)
      c.broadcast(buf.data(), buf.data(), buf.size(), DataType::F32, 0);
    else
      c.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
  });
}

// Same bytes, another datatype, in another domain: only the tags can tell.
TEST(CallMismatch, DatatypeAcrossDomains) {
  everyRankRefuses(2, 1, 1, "does not match the posted receive", [](Communicator& c, bool odd) {
    std::vector<std::int32_t> buf(1 << 14, 1);
    c.allreduce(buf.data(), buf.data(), buf.size(), odd ? DataType::F32 : DataType::I32, ReduceOp::Sum);
  });
}

// Domain 1 (ranks 2, 3) broadcasts from rank 2, domain 0 from rank 0: both roots only send, so
// no receive sees a wrong tag. Over UCX a 64 KiB send waits for its receiver (rendezvous), so
// nothing compares the calls until the deadline (TIERCC_TIMEOUT 3 s here). Then the progress
// every rank published names both calls, and every rank of the 2x2 job raises InvalidArgument,
// not Timeout.
TEST(CallMismatch, RootAcrossDomainsIsACallersErrorAtTheDeadline) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ucx");
  everyRankRefuses(
      4, 2, -1, "the ranks' calls do not match",
      [](Communicator& c, bool) {
        std::vector<float> buf(1 << 14, 1.0f);
        c.broadcast(buf.data(), buf.data(), buf.size(), DataType::F32, c.domain() == 1 ? 2 : 0);
      },
      "3s", std::chrono::seconds(8), "ucx");
}

// The same over tcp, whose send is done once the kernel holds it: both roots' broadcasts return
// (each domain has its own root's data, as MPI's eager sends would give), and the next call
// meets the message nobody received: every rank raises InvalidArgument there, at once.
TEST(CallMismatch, RootAcrossDomainsOverTcpIsACallersErrorAtTheNextCall) {
  everyRankRefuses(
      4, 2, -1, "does not match the posted receive",
      [](Communicator& c, bool) {
        std::vector<float> buf(1 << 14, 1.0f);
        c.broadcast(buf.data(), buf.data(), buf.size(), DataType::F32, c.domain() == 1 ? 2 : 0);
        c.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
      },
      "3s", std::chrono::seconds(2), "tcp");
}

}  // namespace
}  // namespace tiercc::test
