// The cuda-ipc scale-up backend on a real GPU: device windows seen across processes, flags and
// their deadlines, a peer that dies, and the one-shot device allreduce against a host reference.
// Two rank processes may share one GPU (CUDA IPC maps across processes, not within one). Where
// cudaIpcUnavailableReason() says the backend cannot run, every test is skipped with that reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/reduce.hpp"
#include "scaleup-emu/cuda-ipc/cuda_check.hpp"
#include "scaleup-emu/cuda-ipc/cuda_ipc_allreduce.hpp"
#include "scaleup-emu/cuda-ipc/cuda_ipc_domain.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/error.hpp"
#include "bootstrap/store.hpp"

namespace tiercc::test {
namespace {

using namespace std::chrono_literals;

constexpr int kRanks = 2;
constexpr std::size_t kWindowBytes = 8u << 20;

class CudaIpc : public ::testing::Test {
 protected:
  void SetUp() override {
    // Probed in a child process: this one must stay CUDA-free to fork the ranks.
    std::string reason = cudaIpcUnavailableReason(kRanks);
    if (!reason.empty()) GTEST_SKIP() << "cuda-ipc unavailable: " << reason;
  }
  static JobOptions options() {
    JobOptions o;
    o.timeout = 120s;
    return o;
  }
};

// One rank's view: the job's store and its domain.
struct Rank {
  std::shared_ptr<Store> store;
  std::unique_ptr<CudaIpcDomain> domain;
  void signalTest(const std::string& key) { store->setString("test/" + key, "1"); }
  void awaitTest(const std::string& key) { store->get("test/" + key, Deadline::after(30s)); }
};

Rank openDomain(int rank, const std::string& storeAddr) {
  Rank r;
  r.store = test::connectJobStore(storeAddr, 10s);
  CudaIpcDomainConfig config;
  config.segmentPrefix = "/tiercc-cudaipc-test-" + storeAddr.substr(storeAddr.rfind(':') + 1);  // one store per job
  config.localRank = rank;
  for (int p = 0; p < kRanks; ++p) config.peerNames.push_back("rank " + std::to_string(p));
  config.windowBytes = kWindowBytes;
  config.setupDeadline = Deadline::after(30s);
  r.domain = std::make_unique<CudaIpcDomain>(std::make_shared<PrefixStore>(r.store, "cuda-ipc/"), config);
  return r;
}

// Runs f, which must throw Error{code}; returns its message (inside a rank: throws otherwise).
template <typename F>
std::string expectError(F f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    TIERCC_CHECK(e.code() == code, "got " << toString(e.code()) << ": " << e.what());
    return e.what();
  }
  TIERCC_CHECK(false, "expected Error{" << toString(code) << "}, nothing was thrown");
  return {};
}

std::vector<std::uint32_t> pattern(int seed, std::size_t words) {
  std::vector<std::uint32_t> out(words);
  std::uint32_t x = 0x9E3779B9u * static_cast<std::uint32_t>(seed + 1);
  for (auto& w : out) w = x = x * 1664525u + 1013904223u;
  return out;
}

TEST_F(CudaIpc, WindowWrittenByOneProcessIsReadByTheOther) {
  JobResult job = runRanks(
      kRanks,
      [](int rank, const std::string& storeAddr) {
        Rank r = openDomain(rank, storeAddr);
        CudaIpcDomain& d = *r.domain;
        const std::size_t words = kWindowBytes / 4;
        std::vector<std::uint32_t> mine = pattern(rank, words);
        TIERCC_CUDA_CHECK(cudaMemcpy(d.window(rank), mine.data(), kWindowBytes, cudaMemcpyHostToDevice));
        d.publishDeviceWrites(nullptr);
        d.signal(0, 1);
        const int peer = 1 - rank;
        d.waitUntil(peer, 0, 1, Deadline::after(30s), "window test");
        std::vector<std::uint32_t> seen(words);
        TIERCC_CUDA_CHECK(cudaMemcpy(seen.data(), d.window(peer), kWindowBytes, cudaMemcpyDeviceToHost));
        TIERCC_CHECK(seen == pattern(peer, words), "rank " << rank << " read a wrong window of rank " << peer);
        d.signal(1, 1);  // done reading
        d.waitUntil(peer, 1, 1, Deadline::after(30s), "window test");
      },
      options());
  EXPECT_TRUE(job.ok()) << job.report();
}

TEST_F(CudaIpc, WaitsReturnOnTheFlagAndTimeOutAtTheDeadline) {
  JobResult job = runRanks(
      kRanks,
      [](int rank, const std::string& storeAddr) {
        Rank r = openDomain(rank, storeAddr);
        CudaIpcDomain& d = *r.domain;
        if (rank == 1) {
          d.signal(3, 5);
          r.awaitTest("rank0-done");
          return;
        }
        d.waitUntil(1, 3, 5, Deadline::after(30s), "flag test");  // raised: returns
        d.waitUntil(1, 3, 4, Deadline::after(30s), "flag test");  // passed: returns
        const auto start = std::chrono::steady_clock::now();
        std::string msg =
            expectError([&] { d.waitUntil(1, 2, 1, Deadline::after(300ms), "flag test #7"); }, ErrorCode::Timeout);
        const auto took = std::chrono::steady_clock::now() - start;
        TIERCC_CHECK(took >= 300ms && took < 5s,
                     "the wait took " << std::chrono::duration<double>(took).count() << " s");
        TIERCC_CHECK(msg.rfind("flag test #7", 0) == 0 && msg.find("rank 1") != std::string::npos, msg);
        r.signalTest("rank0-done");
      },
      options());
  EXPECT_TRUE(job.ok()) << job.report();
}

TEST_F(CudaIpc, PeerThatDiesIsReportedAsPeerFailure) {
  JobResult job = runRanks(
      kRanks,
      [](int rank, const std::string& storeAddr) {
        Rank r = openDomain(rank, storeAddr);
        if (rank == 1) {
          r.awaitTest("rank0-waiting");
          ::_exit(0);  // dies without a word: no poison, no teardown
        }
        r.signalTest("rank0-waiting");
        const auto start = std::chrono::steady_clock::now();
        std::string msg = expectError([&] { r.domain->waitUntil(1, 0, 1, Deadline::after(60s), "allreduce #3"); },
                                      ErrorCode::PeerFailure);
        const auto took = std::chrono::steady_clock::now() - start;
        TIERCC_CHECK(took < 10s, "noticed the death after " << std::chrono::duration<double>(took).count() << " s");
        TIERCC_CHECK(msg.find("rank 1") != std::string::npos, msg);
      },
      options());
  EXPECT_TRUE(job.ok()) << job.report();
}

// Inputs whose sums are exact in f32 and bf16, so that every rank must match the reference bit
// for bit: small multiples of 1/4.
float inputValue(int rank, std::size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + rank * 3) % 17) - 8) * 0.25f;
}

template <typename T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(std::size_t count) {
    void* raw = nullptr;
    TIERCC_CUDA_CHECK(cudaMalloc(&raw, count * sizeof(T)));
    p = static_cast<T*>(raw);
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// count is odd so that the kernels' tails run; two calls check that sequence numbers advance.
constexpr std::size_t kCount = (1u << 20) + 3;

TEST_F(CudaIpc, AllreduceF32MatchesTheHostReference) {
  JobResult job = runRanks(
      kRanks,
      [](int rank, const std::string& storeAddr) {
        Rank r = openDomain(rank, storeAddr);
        std::vector<float> in(kCount), sum(kCount), max(kCount);
        for (std::size_t i = 0; i < kCount; ++i) {
          in[i] = inputValue(rank, i);
          sum[i] = 0;
          max[i] = inputValue(0, i);
          for (int p = 0; p < kRanks; ++p) sum[i] += inputValue(p, i);
          for (int p = 1; p < kRanks; ++p) max[i] = std::max(max[i], inputValue(p, i));
        }
        DeviceBuffer<float> send(kCount), recv(kCount);
        TIERCC_CUDA_CHECK(cudaMemcpy(send.p, in.data(), kCount * 4, cudaMemcpyHostToDevice));
        cudaIpcAllreduce(*r.domain, send.p, recv.p, kCount, DataType::F32, ReduceOp::Sum, 1, Deadline::after(30s),
                         "allreduce #1");
        std::vector<float> out(kCount);
        TIERCC_CUDA_CHECK(cudaMemcpy(out.data(), recv.p, kCount * 4, cudaMemcpyDeviceToHost));
        TIERCC_CHECK(std::memcmp(out.data(), sum.data(), kCount * 4) == 0, "sum differs from the reference");
        // In place, the second call of the domain.
        cudaIpcAllreduce(*r.domain, send.p, send.p, kCount, DataType::F32, ReduceOp::Max, 2, Deadline::after(30s),
                         "allreduce #2");
        TIERCC_CUDA_CHECK(cudaMemcpy(out.data(), send.p, kCount * 4, cudaMemcpyDeviceToHost));
        TIERCC_CHECK(std::memcmp(out.data(), max.data(), kCount * 4) == 0, "max differs from the reference");
      },
      options());
  EXPECT_TRUE(job.ok()) << job.report();
}

TEST_F(CudaIpc, AllreduceBf16AccumulatesInF32AndMatchesTheHostReference) {
  JobResult job = runRanks(
      kRanks,
      [](int rank, const std::string& storeAddr) {
        Rank r = openDomain(rank, storeAddr);
        std::vector<std::uint16_t> in(kCount), want(kCount);
        for (std::size_t i = 0; i < kCount; ++i) {
          in[i] = floatToBf16(inputValue(rank, i));
          float acc = 0;  // the reference: widen each input, add in f32 in rank order, round once
          for (int p = 0; p < kRanks; ++p) acc += bf16ToFloat(floatToBf16(inputValue(p, i)));
          want[i] = floatToBf16(acc);
        }
        DeviceBuffer<std::uint16_t> send(kCount), recv(kCount);
        TIERCC_CUDA_CHECK(cudaMemcpy(send.p, in.data(), kCount * 2, cudaMemcpyHostToDevice));
        cudaIpcAllreduce(*r.domain, send.p, recv.p, kCount, DataType::BF16, ReduceOp::Sum, 1, Deadline::after(30s),
                         "allreduce #1");
        std::vector<std::uint16_t> out(kCount);
        TIERCC_CUDA_CHECK(cudaMemcpy(out.data(), recv.p, kCount * 2, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < kCount; ++i)
          TIERCC_CHECK(out[i] == want[i],
                       "element " << i << ": got 0x" << std::hex << out[i] << ", want 0x" << want[i]);
      },
      options());
  EXPECT_TRUE(job.ok()) << job.report();
}

}  // namespace
}  // namespace tiercc::test
