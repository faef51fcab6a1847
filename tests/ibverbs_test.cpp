// The ibverbs transport on a real RDMA device (SoftRoCE in the VM of tests/softroce): forked
// ranks joined by a TCP store exchange messages of every protocol path (eager, inline,
// rendezvous), one-sided writes, and fail in bounded time when a peer dies, aborts or is late.
// Where ibverbs cannot run, every test is skipped with the reason.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/store.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/error.hpp"
#include "transport/factory.hpp"
#include "transport/ibverbs/ib_transport.hpp"

namespace tiercc::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct RankEnv {
  std::shared_ptr<Store> store;
  std::unique_ptr<Transport> transport;
};

// Connects to the job's store and creates the ibverbs transport towards every other rank.
RankEnv connectRank(int rank, int n, const std::string& storeAddr) {
  RankEnv env;
  env.store = test::connectJobStore(storeAddr, 30s);
  TransportSetup ts;
  ts.rank = rank;
  ts.worldSize = n;
  for (int p = 0; p < n; ++p)
    if (p != rank) ts.peers.push_back(p);
  ts.peerName = [](int r) { return "rank " + std::to_string(r); };
  ts.deadline = Deadline::after(30s);
  env.transport = createTransport("ibverbs", *env.store, ts);
  return env;
}

std::byte pattern(int from, std::size_t msg, std::size_t i) {
  return static_cast<std::byte>((from * 131 + msg * 7 + i * 13 + (i >> 12)) & 0xff);
}

void fill(std::vector<std::byte>& b, int from, std::size_t msg) {
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = pattern(from, msg, i);
}

void check(const std::vector<std::byte>& b, int from, std::size_t msg, const std::string& what) {
  for (std::size_t i = 0; i < b.size(); ++i)
    TIERCC_CHECK(b[i] == pattern(from, msg, i), what << ": byte " << i << " of " << b.size() << " differs");
}

JobOptions job(std::chrono::seconds limit = 120s) {
  JobOptions jo;
  jo.timeout = limit;
  if (!std::getenv("TIERCC_DEBUG")) jo.env = {{"TIERCC_DEBUG", "WARN"}};
  return jo;
}

// Runs `body` and checks it throws Error with `code` naming `needle`, within `limit`.
template <typename F>
void expectError(F&& body, ErrorCode code, const std::string& needle, std::chrono::milliseconds limit) {
  auto start = Clock::now();
  try {
    body();
  } catch (const Error& e) {
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    std::string msg = e.what();
    std::printf("expected error after %lld ms: [%s] %s\n", static_cast<long long>(took.count()), toString(e.code()), msg.c_str());
    TIERCC_CHECK(e.code() == code, "error code " << toString(e.code()) << " (wanted " << toString(code) << "): " << msg);
    TIERCC_CHECK(msg.find(needle) != std::string::npos, "message does not name '" << needle << "': " << msg);
    TIERCC_CHECK(took < limit, "the error took " << took.count() << " ms");
    return;
  }
  TIERCC_CHECK(false, "no error was raised");
}

TEST(Ibverbs, SetupRunsTheLoopbackProbe) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(1, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 1, store);
    TIERCC_CHECK(std::string(env.transport->name()) == "ibverbs", "name");
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

// Both ranks send to each other at once: zero bytes, inline, eager, just over the eager limit
// (rendezvous), and 64 MiB.
TEST(Ibverbs, SendRecvEverySize) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    const int peer = 1 - rank;
    for (std::size_t size : {std::size_t(0), std::size_t(1), std::size_t(100), std::size_t(8192), std::size_t(8193),
                             std::size_t(1) << 20, std::size_t(64) << 20}) {
      std::vector<std::byte> out(size), in(size);
      fill(out, rank, size);
      TransferOp s{peer, true, 7, out.data(), size};
      TransferOp v{peer, false, 7, in.data(), size};
      env.transport->isend(s);
      env.transport->irecv(v);
      env.transport->wait({&s, &v}, Deadline::after(60s), "size " + std::to_string(size));
      check(in, peer, size, "message of " + std::to_string(size) + " bytes");
    }
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

// Far more operations than credits, mixed sizes, all posted before one wait; receives posted
// late on one side (messages arrive unexpected); three ranks so every rank has two peers.
TEST(Ibverbs, ManyOutstandingInOrder) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(3, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 3, store);
    constexpr std::size_t kMsgs = 400;
    auto sizeOf = [](std::size_t i) { return i % 50 == 7 ? std::size_t(100000) : (i * 37) % 3000; };
    std::vector<std::vector<std::byte>> out, in;
    std::vector<TransferOp> ops;
    ops.reserve(4 * kMsgs);
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == rank) continue;
      for (std::size_t i = 0; i < kMsgs; ++i) {
        out.emplace_back(sizeOf(i));
        fill(out.back(), rank, i);
        ops.push_back({peer, true, i, out.back().data(), out.back().size()});
        env.transport->isend(ops.back());
      }
    }
    if (rank == 0) std::this_thread::sleep_for(300ms);  // the others' messages arrive unexpected
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == rank) continue;
      for (std::size_t i = 0; i < kMsgs; ++i) {
        in.emplace_back(sizeOf(i));
        ops.push_back({peer, false, i, in.back().data(), in.back().size()});
        env.transport->irecv(ops.back());
      }
    }
    std::vector<TransferOp*> all;
    for (TransferOp& o : ops) all.push_back(&o);
    env.transport->wait(all, Deadline::after(90s), "many");
    std::size_t k = 0;
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == rank) continue;
      for (std::size_t i = 0; i < kMsgs; ++i) check(in[k++], peer, i, "message " + std::to_string(i));
    }
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

TEST(Ibverbs, TagMismatchIsAnErrorNamingThePeer) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    std::vector<std::byte> buf(64);
    if (rank == 0) {
      TransferOp s{1, true, 1, buf.data(), buf.size()};
      env.transport->isend(s);
      env.transport->wait({&s}, Deadline::after(10s), "send");
      env.store->get("done", Deadline::after(30s));
      return;
    }
    TransferOp v{0, false, 2, buf.data(), buf.size()};
    env.transport->irecv(v);
    // The ranks called different operations: a caller's error, not the network's.
    expectError([&] { env.transport->wait({&v}, Deadline::after(10s), "recv"); }, ErrorCode::InvalidArgument,
                "rank 0", 10s);
    env.store->setString("done", "1");
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

// Rendezvous sizes that differ: both sides learn it (the receiver from the header, the sender
// from the clear-to-send, or from the receiver closing).
TEST(Ibverbs, LengthMismatchOfLargeMessages) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    std::vector<std::byte> buf(rank == 0 ? 1 << 20 : 2 << 20);
    TransferOp op{1 - rank, rank == 0, 5, buf.data(), buf.size()};
    rank == 0 ? env.transport->isend(op) : env.transport->irecv(op);
    try {
      env.transport->wait({&op}, Deadline::after(20s), "mismatch");
      TIERCC_CHECK(false, "a mismatched rendezvous completed");
    } catch (const Error& e) {
      std::string msg = e.what();
      std::printf("rank %d: %s\n", rank, msg.c_str());
      // The side that sees the mismatch raises InvalidArgument; the other may see the connection end.
      TIERCC_CHECK(e.code() == ErrorCode::InvalidArgument || e.code() == ErrorCode::TransportError ||
                       e.code() == ErrorCode::PeerFailure,
                   msg);
      TIERCC_CHECK(msg.find(rank == 0 ? "rank 1" : "rank 0") != std::string::npos, msg);
    }
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

TEST(Ibverbs, WriteWithImmediateAndNotify) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    constexpr std::size_t kRegion = 1 << 20;
    std::vector<std::byte> mem(kRegion);
    auto region = env.transport->registerMemory(mem.data(), mem.size());
    TIERCC_CHECK(region->size() == kRegion && region->data() == mem.data(), "region");
    if (rank == 1) {
      env.store->set("desc", region->descriptor());
      std::vector<TransferOp> notes(4);
      for (TransferOp& n : notes) {
        n.peer = 0;
        env.transport->inotify(n);
      }
      std::vector<TransferOp*> all;
      for (TransferOp& n : notes) all.push_back(&n);
      env.transport->wait(all, Deadline::after(30s), "notify");
      const std::uint32_t imms[4] = {0xdeadbeef, 1, 0, 42};
      const std::size_t lens[4] = {4096, kRegion - 8192, 0, 100};
      for (int i = 0; i < 4; ++i)
        TIERCC_CHECK(notes[i].tag == imms[i] && notes[i].len == lens[i],
                     "notification " << i << ": imm " << notes[i].tag << " len " << notes[i].len);
      std::vector<std::byte> want(kRegion);
      fill(want, 0, 1);
      for (std::size_t i = 0; i < 4096; ++i) TIERCC_CHECK(mem[i] == want[i], "write 0 byte " << i);
      for (std::size_t i = 8192; i < kRegion; ++i) TIERCC_CHECK(mem[i] == want[i], "write 1 byte " << i);
      env.store->setString("checked", "1");
      return;
    }
    fill(mem, 0, 1);
    Bytes desc = env.store->get("desc", Deadline::after(30s));
    WriteOp w[4];
    const std::uint32_t imms[4] = {0xdeadbeef, 1, 0, 42};
    const std::size_t offs[4] = {0, 8192, 100, kRegion - 100}, lens[4] = {4096, kRegion - 8192, 0, 100};
    std::vector<TransferOp*> all;
    for (int i = 0; i < 4; ++i) {
      w[i].peer = 1;
      w[i].isSend = true;
      w[i].buf = mem.data() + offs[i];
      w[i].len = lens[i];
      w[i].remote = desc;
      w[i].remoteOffset = offs[i];
      w[i].imm = imms[i];
      env.transport->iwrite(w[i]);
      all.push_back(&w[i]);
    }
    env.transport->wait(all, Deadline::after(30s), "iwrite");
    // Out of bounds is refused before anything moves.
    WriteOp bad;
    bad.peer = 1;
    bad.buf = mem.data();
    bad.len = 200;
    bad.remote = desc;
    bad.remoteOffset = kRegion - 100;
    expectError([&] { env.transport->iwrite(bad); }, ErrorCode::InvalidArgument, "exceed", 1s);
    env.store->get("checked", Deadline::after(30s));
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

TEST(Ibverbs, RegistrationCacheHitsAndEvicts) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobOptions jo = job();
  jo.env.push_back({"TIERCC_IB_MR_CACHE", "4"});
  JobResult r = runRanks(1, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 1, store);
    Transport& t = *env.transport;
    std::vector<std::vector<std::byte>> bufs(6, std::vector<std::byte>(1 << 16));
    auto first = t.registerMemory(bufs[0].data(), bufs[0].size());
    auto inner = t.registerMemory(bufs[0].data() + 100, 1000);
    TIERCC_CHECK(inner == first, "a range inside a live registration must hit");
    IbverbsCacheStats s = ibverbsCacheStats(t);
    TIERCC_CHECK(s.hits == 1 && s.misses == 1 && s.entries == 1, "hits " << s.hits << " misses " << s.misses);
    TIERCC_CHECK(first->descriptor().size() == 24, "descriptor size");
    for (int i = 1; i < 6; ++i) t.registerMemory(bufs[i].data(), bufs[i].size());
    s = ibverbsCacheStats(t);
    TIERCC_CHECK(s.entries == 4 && s.evictions == 2, "entries " << s.entries << " evictions " << s.evictions);
    // bufs[0] was least recently used: evicted, so registering it again is a new registration
    // (the one we hold stays valid).
    auto again = t.registerMemory(bufs[0].data(), bufs[0].size());
    TIERCC_CHECK(again != first, "an evicted range must be registered anew");
    TIERCC_CHECK(t.registerMemory(bufs[0].data(), 10) == again, "hit after re-registering");
    t.invalidateMemory(bufs[0].data() + 10, 1);
    TIERCC_CHECK(t.registerMemory(bufs[0].data(), 10) != again, "invalidate must drop overlapping entries");
    s = ibverbsCacheStats(t);
    std::printf("cache: %zu hits, %zu misses, %zu evictions, %zu entries\n", s.hits, s.misses, s.evictions, s.entries);
  }, jo);
  EXPECT_TRUE(r.ok()) << r.report();
}

// Rank 1 starts a 64 MiB send and is killed while it is in flight; rank 0, waiting for it with a
// long deadline, must fail with PeerFailure naming rank 1 within seconds.
TEST(Ibverbs, PeerKilledMidTransfer) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    std::vector<std::byte> buf(64 << 20);
    TransferOp op{1 - rank, rank == 1, 3, buf.data(), buf.size()};
    if (rank == 1) {
      env.transport->isend(op);
      env.store->get("posted", Deadline::after(30s));
      Deadline soon = Deadline::after(150ms);
      try {
        env.transport->wait({&op}, soon, "send");
      } catch (const Error&) {
      }
      kill(getpid(), SIGKILL);
    }
    env.transport->irecv(op);
    env.store->setString("posted", "1");
    expectError([&] { env.transport->wait({&op}, Deadline::after(60s), "recv"); }, ErrorCode::PeerFailure, "rank 1", 15s);
    // Poisoned: later operations with rank 1 fail at once.
    TransferOp more{1, false, 4, buf.data(), 10};
    expectError([&] { env.transport->irecv(more); }, ErrorCode::PeerFailure, "rank 1", 1s);
  }, job());
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_TRUE(r.ranks[0].ok()) << r.report();
  EXPECT_TRUE(WIFSIGNALED(r.ranks[1].status)) << r.report();
}

// A peer that dies while we only wait to receive a small message is found by the liveness probe.
TEST(Ibverbs, PeerKilledWhileWeOnlyReceive) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    if (rank == 1) {
      env.store->get("posted", Deadline::after(30s));
      kill(getpid(), SIGKILL);
    }
    std::vector<std::byte> buf(16);
    TransferOp op{1, false, 3, buf.data(), buf.size()};
    env.transport->irecv(op);
    env.store->setString("posted", "1");
    expectError([&] { env.transport->wait({&op}, Deadline::after(60s), "recv"); }, ErrorCode::PeerFailure, "rank 1", 15s);
  }, job());
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_TRUE(r.ranks[0].ok()) << r.report();
}

// abort() from another thread wakes a blocked waiter with Aborted, and the peer, which waits on
// us, fails at once with PeerFailure rather than at its deadline.
TEST(Ibverbs, AbortWakesWaitersAndTellsPeers) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    std::vector<std::byte> buf(16);
    TransferOp op{1 - rank, false, 9, buf.data(), buf.size()};
    env.transport->irecv(op);
    if (rank == 0) {
      std::thread aborter([&] {
        std::this_thread::sleep_for(500ms);
        env.transport->abort();
      });
      expectError([&] { env.transport->wait({&op}, Deadline::after(60s), "recv"); }, ErrorCode::Aborted, "abort", 5s);
      aborter.join();
      TransferOp later{1, true, 1, buf.data(), 1};
      expectError([&] { env.transport->isend(later); }, ErrorCode::Aborted, "abort", 1s);
      return;
    }
    expectError([&] { env.transport->wait({&op}, Deadline::after(60s), "recv"); }, ErrorCode::PeerFailure, "rank 0", 10s);
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

TEST(Ibverbs, TimeoutSaysWhatWasPending) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ibverbs");
  JobResult r = runRanks(2, [](int rank, const std::string& store) {
    RankEnv env = connectRank(rank, 2, store);
    if (rank == 1) {
      env.store->get("done", Deadline::after(30s));
      return;
    }
    std::vector<std::byte> small(16), large(1 << 20);
    TransferOp a{1, false, 3, small.data(), small.size()};
    TransferOp b{1, true, 4, large.data(), large.size()};
    env.transport->irecv(a);
    env.transport->isend(b);
    expectError([&] { env.transport->wait({&a, &b}, Deadline::after(700ms), "step 5"); }, ErrorCode::Timeout,
                "receiving 16 bytes (tag 3) from rank 1", 5s);
    env.store->setString("done", "1");
  }, job());
  EXPECT_TRUE(r.ok()) << r.report();
}

}  // namespace
}  // namespace tiercc::test
