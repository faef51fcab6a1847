// The bad-input catalogue: every way to call a collective wrongly that a rank can see by itself,
// one table, run on a one-rank communicator and on every rank of a 2x2 job. Each case must raise
// InvalidArgument naming what was wrong, write nothing (both buffers are checked), and consume
// nothing: after the whole table the ranks still agree, which a final allreduce checks (a
// refused call that took a sequence number on some ranks would desynchronise them).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.h"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

constexpr std::size_t kElems = 64;  // per buffer, in f32: enough for every valid count below
constexpr float kSendValue = 1.0f, kRecvValue = 42.0f;

struct Buffers {
  std::vector<float> send, recv;
  std::vector<std::size_t> counts, displs, zeros;  // per peer: 1 element each, at 0, 1, ...
  float* s() { return send.data(); }
  float* r() { return recv.data(); }
};

struct Case {
  const char* name;
  const char* needle;  ///< what the message must say
  std::function<void(Communicator&, Buffers&)> call;
  int minRanks = 1;  ///< a case that needs a valid peer other than this rank
};

// The next rank: a valid peer when there are two ranks or more.
int next(const Communicator& c) { return (c.rank() + 1) % c.size(); }

// A C call that must return tiercc_invalid_argument; its message is raised as the C++ error.
void expectCInvalid(tiercc_result_t result) {
  if (result != tiercc_invalid_argument)
    throw std::runtime_error(std::string("returned ") + tiercc_result_string(result) + ", not invalid argument");
  throw Error(ErrorCode::InvalidArgument, tiercc_get_last_error());
}

constexpr auto kBadType = static_cast<DataType>(42);
constexpr auto kNegativeType = static_cast<DataType>(-1);
constexpr auto kBadOp = static_cast<ReduceOp>(-1);
constexpr auto kHugeOp = static_cast<ReduceOp>(99);
constexpr auto F32 = DataType::F32;
constexpr auto Sum = ReduceOp::Sum;
constexpr std::size_t kOverflow = SIZE_MAX / 2;  // elements: times 4 bytes, past the address space

std::vector<Case> catalogue() {
  using C = Communicator;
  using B = Buffers;
  return {
      // allreduce
      {"allreduce null send", "send buffer is null", [](C& c, B& b) { c.allreduce(nullptr, b.r(), 4, F32, Sum); }},
      {"allreduce null recv", "receive buffer is null", [](C& c, B& b) { c.allreduce(b.s(), nullptr, 4, F32, Sum); }},
      {"allreduce count overflows", "overflows", [](C& c, B& b) { c.allreduce(b.s(), b.r(), kOverflow, F32, Sum); }},
      {"allreduce datatype 42", "unknown datatype 42", [](C& c, B& b) { c.allreduce(b.s(), b.r(), 4, kBadType, Sum); }},
      {"allreduce datatype -1", "unknown datatype -1",
       [](C& c, B& b) { c.allreduce(b.s(), b.r(), 4, kNegativeType, Sum); }},
      {"allreduce op -1", "unknown reduction op -1", [](C& c, B& b) { c.allreduce(b.s(), b.r(), 4, F32, kBadOp); }},
      {"allreduce op 99", "unknown reduction op 99", [](C& c, B& b) { c.allreduce(b.s(), b.r(), 4, F32, kHugeOp); }},
      {"allreduce partial overlap", "overlap", [](C& c, B& b) { c.allreduce(b.r(), b.r() + 1, 8, F32, Sum); }},
      {"allreduceAsync null send", "send buffer is null",
       [](C& c, B& b) { c.allreduceAsync(nullptr, b.r(), 4, F32, Sum).wait(); }},
      // reduce-scatter
      {"reduce_scatter null send", "send buffer is null",
       [](C& c, B& b) { c.reduceScatter(nullptr, b.r(), 2, F32, Sum); }},
      {"reduce_scatter null recv", "receive buffer is null",
       [](C& c, B& b) { c.reduceScatter(b.s(), nullptr, 2, F32, Sum); }},
      {"reduce_scatter count x ranks overflows", "overflows",
       [](C& c, B& b) { c.reduceScatter(b.s(), b.r(), SIZE_MAX / 4 / c.size() + 1, F32, Sum); }},
      {"reduce_scatter op 99", "unknown reduction op",
       [](C& c, B& b) { c.reduceScatter(b.s(), b.r(), 2, F32, kHugeOp); }},
      {"reduce_scatter datatype 42", "unknown datatype",
       [](C& c, B& b) { c.reduceScatter(b.s(), b.r(), 2, kBadType, Sum); }},
      {"reduce_scatter overlap not in place", "overlap",
       [](C& c, B& b) { c.reduceScatter(b.r(), b.r() + 1, 2, F32, Sum); }},
      {"reduceScatterAsync op -1", "unknown reduction op",
       [](C& c, B& b) { c.reduceScatterAsync(b.s(), b.r(), 2, F32, kBadOp).wait(); }},
      // allgather
      {"allgather null send", "send buffer is null", [](C& c, B& b) { c.allgather(nullptr, b.r(), 2, F32); }},
      {"allgather null recv", "receive buffer is null", [](C& c, B& b) { c.allgather(b.s(), nullptr, 2, F32); }},
      {"allgather count x ranks overflows", "overflows",
       [](C& c, B& b) { c.allgather(b.s(), b.r(), SIZE_MAX / 4 / c.size() + 1, F32); }},
      {"allgather datatype 42", "unknown datatype", [](C& c, B& b) { c.allgather(b.s(), b.r(), 2, kBadType); }},
      {"allgather overlap not in place", "overlap",
       [](C& c, B& b) { c.allgather(b.r() + 2 * c.rank() + 1, b.r(), 2, F32); }},
      {"allgatherAsync null recv", "receive buffer is null",
       [](C& c, B& b) { c.allgatherAsync(b.s(), nullptr, 2, F32).wait(); }},
      // broadcast
      {"broadcast root = size", "is not in [0,", [](C& c, B& b) { c.broadcast(b.s(), b.r(), 4, F32, c.size()); }},
      {"broadcast root -1", "root -1", [](C& c, B& b) { c.broadcast(b.s(), b.r(), 4, F32, -1); }},
      {"broadcast null recv", "receive buffer is null", [](C& c, B& b) { c.broadcast(b.s(), nullptr, 4, F32, 0); }},
      {"broadcast null send at the root", "send buffer is null",
       [](C& c, B& b) { c.broadcast(nullptr, b.r(), 4, F32, c.rank()); }},
      {"broadcast datatype 42", "unknown datatype", [](C& c, B& b) { c.broadcast(b.s(), b.r(), 4, kBadType, 0); }},
      {"broadcast count overflows", "overflows", [](C& c, B& b) { c.broadcast(b.s(), b.r(), kOverflow, F32, 0); }},
      // reduce
      {"reduce root = size", "is not in [0,", [](C& c, B& b) { c.reduce(b.s(), b.r(), 4, F32, Sum, c.size()); }},
      {"reduce root -7", "root -7", [](C& c, B& b) { c.reduce(b.s(), b.r(), 4, F32, Sum, -7); }},
      {"reduce op 99", "unknown reduction op", [](C& c, B& b) { c.reduce(b.s(), b.r(), 4, F32, kHugeOp, 0); }},
      {"reduce null send", "send buffer is null", [](C& c, B& b) { c.reduce(nullptr, b.r(), 4, F32, Sum, 0); }},
      {"reduce null recv at the root", "receive buffer is null",
       [](C& c, B& b) { c.reduce(b.s(), nullptr, 4, F32, Sum, c.rank()); }},
      {"reduce count overflows", "overflows", [](C& c, B& b) { c.reduce(b.s(), b.r(), kOverflow, F32, Sum, 0); }},
      {"reduceAsync root -1", "root -1", [](C& c, B& b) { c.reduceAsync(b.s(), b.r(), 4, F32, Sum, -1).wait(); }},
      // all-to-all
      {"alltoall null send", "send buffer is null", [](C& c, B& b) { c.alltoall(nullptr, b.r(), 2, F32); }},
      {"alltoall null recv", "receive buffer is null", [](C& c, B& b) { c.alltoall(b.s(), nullptr, 2, F32); }},
      {"alltoall count x ranks overflows", "overflows",
       [](C& c, B& b) { c.alltoall(b.s(), b.r(), SIZE_MAX / 4 / c.size() + 1, F32); }},
      {"alltoall overlap", "overlap", [](C& c, B& b) { c.alltoall(b.r(), b.r() + 1, 2, F32); }},
      {"alltoall datatype -1", "unknown datatype", [](C& c, B& b) { c.alltoall(b.s(), b.r(), 2, kNegativeType); }},
      // all-to-allv
      {"alltoallv null send counts", "counts and displacements must not be null",
       [](C& c, B& b) { c.alltoallv(b.s(), nullptr, b.displs.data(), b.r(), b.counts.data(), b.displs.data(), F32); }},
      {"alltoallv null receive displacements", "counts and displacements must not be null",
       [](C& c, B& b) { c.alltoallv(b.s(), b.counts.data(), b.displs.data(), b.r(), b.counts.data(), nullptr, F32); }},
      {"alltoallv count + displacement overflows", "overflows",
       [](C& c, B& b) {
         std::vector<std::size_t> displs = b.displs;
         displs.back() = SIZE_MAX;
         c.alltoallv(b.s(), b.counts.data(), displs.data(), b.r(), b.counts.data(), b.displs.data(), F32);
       }},
      {"alltoallv extent overflows in bytes", "overflows",
       [](C& c, B& b) {
         std::vector<std::size_t> displs = b.displs;
         displs.back() = kOverflow;
         c.alltoallv(b.s(), b.counts.data(), b.displs.data(), b.r(), b.counts.data(), displs.data(), F32);
       }},
      {"alltoallv sends itself what it does not expect", "sends itself",
       [](C& c, B& b) {
         std::vector<std::size_t> counts = b.counts;
         counts[static_cast<std::size_t>(c.rank())] = 2;
         c.alltoallv(b.s(), counts.data(), b.displs.data(), b.r(), b.counts.data(), b.displs.data(), F32);
       }},
      {"alltoallv null send with counts", "send buffer is null",
       [](C& c, B& b) {
         c.alltoallv(nullptr, b.counts.data(), b.displs.data(), b.r(), b.counts.data(), b.displs.data(), F32);
       }},
      {"alltoallv overlap", "overlap",
       [](C& c, B& b) {
         c.alltoallv(b.r(), b.counts.data(), b.displs.data(), b.r(), b.counts.data(), b.displs.data(), F32);
       }},
      {"alltoallv datatype 42", "unknown datatype",
       [](C& c, B& b) {
         c.alltoallv(b.s(), b.counts.data(), b.displs.data(), b.r(), b.counts.data(), b.displs.data(), kBadType);
       }},
      // send and receive
      {"send to itself", "is this rank", [](C& c, B& b) { c.send(b.s(), 4, F32, c.rank()); }},
      {"send to rank = size", "is not in [0,", [](C& c, B& b) { c.send(b.s(), 4, F32, c.size()); }},
      {"recv from -1", "peer -1", [](C& c, B& b) { c.recv(b.r(), 4, F32, -1); }},
      {"recv into null", "receive buffer is null", [](C& c, B&) { c.recv(nullptr, 4, F32, next(c)); }, 2},
      {"send count overflows", "overflows", [](C& c, B& b) { c.send(b.s(), kOverflow, F32, next(c)); }, 2},
      {"send datatype 42", "unknown datatype", [](C& c, B& b) { c.send(b.s(), 4, kBadType, next(c)); }, 2},
      // the C ABI
      {"C allreduce on a NULL communicator", "communicator is NULL",
       [](C&, B& b) { expectCInvalid(tiercc_allreduce(b.s(), b.r(), 4, tiercc_f32, tiercc_sum, nullptr)); }},
  };
}

// Runs the table on `comm`; returns the cases that did not behave, one line each.
std::string runCatalogue(Communicator& comm) {
  std::string wrong;
  Buffers b;
  const auto n = static_cast<std::size_t>(comm.size());
  for (std::size_t p = 0; p < n; ++p) {
    b.counts.push_back(1);
    b.displs.push_back(p);
    b.zeros.push_back(0);
  }
  for (const Case& c : catalogue()) {
    if (comm.size() < c.minRanks) continue;
    b.send.assign(kElems, kSendValue);
    b.recv.assign(kElems, kRecvValue);
    try {
      c.call(comm, b);
      wrong += std::string(c.name) + ": no error\n";
      continue;
    } catch (const Error& e) {
      const std::string what = e.what();
      if (e.code() != ErrorCode::InvalidArgument)
        wrong += std::string(c.name) + ": " + toString(e.code()) + " (" + what + ")\n";
      else if (what.find(c.needle) == std::string::npos)
        wrong += std::string(c.name) + ": the message does not say '" + c.needle + "': " + what + "\n";
    } catch (const std::exception& e) {
      wrong += std::string(c.name) + ": " + e.what() + "\n";
    }
    // In-place cases pass the receive buffer as the send buffer: neither may have changed.
    for (float v : b.send)
      if (v != kSendValue) {
        wrong += std::string(c.name) + ": the send buffer was written\n";
        break;
      }
    for (float v : b.recv)
      if (v != kRecvValue) {
        wrong += std::string(c.name) + ": the receive buffer was written\n";
        break;
      }
  }
  return wrong;
}

// The ranks still agree after the table: nothing was consumed.
void stillInStep(Communicator& comm) {
  std::vector<float> x(kElems, static_cast<float>(comm.rank() + 1)), y(kElems, 0.0f);
  comm.allreduce(x.data(), y.data(), x.size(), F32, Sum);
  const float want = static_cast<float>(comm.size() * (comm.size() + 1) / 2);
  for (float v : y) TIERCC_CHECK(v == want, "the allreduce after the catalogue gave " << v << " instead of " << want);
}

TEST(BadInputCatalogue, HasAtLeastFortyCases) { EXPECT_GE(catalogue().size(), 40u); }

TEST(BadInputCatalogue, OneRank) {
  Communicator comm(makeInProcessStore(), 1, 0);
  const std::string wrong = runCatalogue(comm);
  EXPECT_TRUE(wrong.empty()) << wrong;
  stillInStep(comm);
}

TEST(BadInputCatalogue, EveryRankOfTwoDomainsOfTwo) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "2"}};
  JobResult result = runRanks(
      4,
      [](int rank, const std::string& store) {
        Communicator comm(store, 4, rank);
        const std::string wrong = runCatalogue(comm);
        TIERCC_CHECK(wrong.empty(), "rank " << rank << ":\n" << wrong);
        stillInStep(comm);
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
