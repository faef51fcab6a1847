// The scale-out Transport contract (transport/transport.hpp), checked on every backend this build
// has: each test forks real ranks that create the backend through the factory, so a backend added
// to the registry is tested here without new code. A backend that cannot run here is skipped.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/error.hpp"
#include "transport/factory.hpp"

namespace tiercc::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kLarge = 64u << 20;

// One rank's view of the job: the job's store (for test-level handshakes) and its transport.
struct RankTransport {
  std::shared_ptr<Store> store;
  std::unique_ptr<Transport> transport;

  /// Waits until another rank has called signal(key): the tests' only cross-rank barrier.
  void awaitSignal(const std::string& key) { store->get("test/" + key, Deadline::after(30s)); }
  void signal(const std::string& key) { store->setString("test/" + key, "1"); }
};

// Every rank connects to every other rank, as a communicator's rail peers would; or, `later`,
// connects to none at init and to each peer on first use, as to a communicator's other ranks.
RankTransport connect(const std::string& name, int rank, int n, const std::string& storeAddr, bool later = false) {
  RankTransport rt;
  rt.store = test::connectJobStore(storeAddr, 10s);
  auto netStorePtr = std::make_shared<PrefixStore>(rt.store, "conformance/");
  PrefixStore& netStore = *netStorePtr;
  TransportSetup setup;
  if (later) setup.laterStore = netStorePtr;
  setup.rank = rank;
  setup.worldSize = n;
  for (int p = 0; p < n; ++p)
    if (p != rank) setup.peers.push_back(p);
  setup.peerName = [](int r) { return "rank " + std::to_string(r); };
  setup.deadline = Deadline::after(20s);
  rt.transport = createTransport(name, netStore, setup);
  TIERCC_CHECK(rt.transport->name() == name, "created '" << rt.transport->name() << "' for '" << name << "'");
  return rt;
}

// Deterministic contents, different for every (seed, position): a misplaced byte is caught.
std::vector<std::byte> pattern(std::uint64_t seed, std::size_t len) {
  std::vector<std::byte> out(len);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < len; i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::memcpy(out.data() + i, &x, std::min<std::size_t>(8, len - i));
  }
  return out;
}

bool samePattern(const std::byte* got, std::uint64_t seed, std::size_t len) {
  std::vector<std::byte> want = pattern(seed, len);
  return std::memcmp(got, want.data(), len) == 0;
}

std::vector<TransferOp*> pointers(std::vector<TransferOp>& ops) {
  std::vector<TransferOp*> out;
  for (TransferOp& op : ops) out.push_back(&op);
  return out;
}

// Runs `body` expecting an Error: checks its code, that the message starts with `what`, names
// `needle`, and came within `limit`.
template <typename Body>
void expectError(ErrorCode code, const std::string& what, const std::string& needle, std::chrono::milliseconds limit,
                 Body body) {
  auto start = Clock::now();
  try {
    body();
  } catch (const Error& e) {
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    std::string msg = e.what();
    TIERCC_CHECK(e.code() == code, "expected " << toString(code) << ", got " << toString(e.code()) << ": " << msg);
    TIERCC_CHECK(msg.rfind(what, 0) == 0, "message does not start with '" << what << "': " << msg);
    TIERCC_CHECK(msg.find(needle) != std::string::npos, "message does not name '" << needle << "': " << msg);
    TIERCC_CHECK(took < limit, "the error took " << took.count() << " ms: " << msg);
    return;
  }
  TIERCC_CHECK(false, "expected " << toString(code) << " naming " << needle << ", but the call succeeded");
}

JobOptions job() {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "30s"}, {"TIERCC_DEBUG", "WARN"}};
  jo.timeout = 60s;
  jo.failureGrace = 5s;
  return jo;
}

class TransportConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TIERCC_SKIP_WITHOUT_TRANSPORT(GetParam()); }
  const std::string& backend() const { return GetParam(); }
};

// Three ranks, full mesh: every pair can talk both ways right after creation.
TEST_P(TransportConformance, ConnectsFullMesh) {
  std::string name = backend();
  JobResult result = runRanks(3, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 3, addr);
    std::vector<int> in(3, -1), out(3, rank * 100);
    std::vector<TransferOp> ops;
    for (int p = 0; p < 3; ++p) {
      if (p == rank) continue;
      out[p] += p;
      ops.push_back({p, true, 7, reinterpret_cast<std::byte*>(&out[p]), sizeof(int)});
      ops.push_back({p, false, 7, reinterpret_cast<std::byte*>(&in[p]), sizeof(int)});
    }
    for (TransferOp& op : ops) op.isSend ? rt.transport->isend(op) : rt.transport->irecv(op);
    rt.transport->wait(pointers(ops), Deadline::after(20s), "mesh");
    for (int p = 0; p < 3; ++p)
      if (p != rank) TIERCC_CHECK(in[p] == p * 100 + rank, "from rank " << p << " got " << in[p]);
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// Peers connected on first use: every pair's first operations are posted by both ranks at once
// (both dial, one dial is kept), a large message follows the small one on the same connection,
// and a rank whose peer posts its side late still completes (its dial waits for the peer).
TEST_P(TransportConformance, ConnectsOnFirstUse) {
  std::string name = backend();
  constexpr int kRanks = 4;
  constexpr std::size_t kBig = 4u << 20;
  JobResult result = runRanks(
      kRanks,
      [&](int rank, const std::string& addr) {
        RankTransport rt = connect(name, rank, kRanks, addr, /*later=*/true);
        for (int round = 0; round < 2; ++round) {
          const std::size_t len = round == 0 ? 64 : kBig;
          std::vector<std::vector<std::byte>> out(kRanks), in(kRanks);
          std::vector<TransferOp> ops;
          ops.reserve(2 * kRanks);
          for (int p = 0; p < kRanks; ++p) {
            if (p == rank) continue;
            out[p] = pattern(static_cast<std::uint64_t>(rank * kRanks + p + round * 100), len);
            in[p].assign(len, std::byte{0});
            ops.push_back({p, true, 9, out[p].data(), len});
            ops.push_back({p, false, 9, in[p].data(), len});
          }
          for (TransferOp& op : ops) op.isSend ? rt.transport->isend(op) : rt.transport->irecv(op);
          rt.transport->wait(pointers(ops), Deadline::after(20s), "first use");
          for (int p = 0; p < kRanks; ++p)
            if (p != rank)
              TIERCC_CHECK(samePattern(in[p].data(), static_cast<std::uint64_t>(p * kRanks + rank + round * 100), len),
                           "round " << round << ": wrong bytes from rank " << p);
        }
      },
      job());
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST_P(TransportConformance, FirstUseWaitsForALatePeer) {
  std::string name = backend();
  JobResult result = runRanks(
      2,
      [&](int rank, const std::string& addr) {
        RankTransport rt = connect(name, rank, 2, addr, /*later=*/true);
        int value = rank == 0 ? 4242 : 0;
        TransferOp op{1 - rank, rank == 0, 3, reinterpret_cast<std::byte*>(&value), sizeof value};
        if (rank == 1) std::this_thread::sleep_for(300ms);  // rank 0 dials a peer not in any call yet
        rank == 0 ? rt.transport->isend(op) : rt.transport->irecv(op);
        rt.transport->wait({&op}, Deadline::after(20s), "late peer");
        if (rank == 1) TIERCC_CHECK(value == 4242, "got " << value);
      },
      job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// Connected on first use, a peer this rank never addresses is never waited for: rank 2 creates
// its transport only after ranks 0 and 1 have exchanged messages and closed theirs (a transport
// that connected every peer at init would wait for rank 2 at init, and time out).
TEST_P(TransportConformance, UnaddressedPeersAreNeverWaitedFor) {
  std::string name = backend();
  JobResult result = runRanks(
      3,
      [&](int rank, const std::string& addr) {
        if (rank == 2) {
          auto store = test::connectJobStore(addr, 10s);
          store->get("test/pair-done", Deadline::after(30s));
          RankTransport rt = connect(name, rank, 3, addr, /*later=*/true);
          return;
        }
        {
          RankTransport rt = connect(name, rank, 3, addr, /*later=*/true);
          int value = rank == 0 ? 77 : 0;
          TransferOp op{1 - rank, rank == 0, 5, reinterpret_cast<std::byte*>(&value), sizeof value};
          rank == 0 ? rt.transport->isend(op) : rt.transport->irecv(op);
          rt.transport->wait({&op}, Deadline::after(10s), "pair");
          if (rank == 1) {
            TIERCC_CHECK(value == 77, "got " << value);
            rt.signal("pair-done");
          }
        }
      },
      job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// Many messages of varied sizes and tags in both directions at once arrive in order (FIFO per
// peer), each in the receive posted for it.
TEST_P(TransportConformance, OrderingAndTagsBothDirections) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    const int peer = 1 - rank, count = 200;
    auto sizeOf = [](int i) { return static_cast<std::size_t>((i * 977) % 20000); };
    std::vector<std::vector<std::byte>> sendBufs, recvBufs;
    std::vector<TransferOp> ops;
    ops.reserve(2 * count);
    for (int i = 0; i < count; ++i) {
      sendBufs.push_back(pattern(rank * 1000 + i, sizeOf(i)));
      recvBufs.emplace_back(sizeOf(i));
      std::uint64_t tag = (std::uint64_t{1} << 60) + static_cast<std::uint64_t>(i % 7);
      ops.push_back({peer, true, tag, sendBufs.back().data(), sendBufs.back().size()});
      ops.push_back({peer, false, tag, recvBufs.back().data(), recvBufs.back().size()});
    }
    for (TransferOp& op : ops) op.isSend ? rt.transport->isend(op) : rt.transport->irecv(op);
    rt.transport->wait(pointers(ops), Deadline::after(20s), "ordering");
    for (int i = 0; i < count; ++i) {
      TIERCC_CHECK(ops[2 * i].complete && ops[2 * i + 1].complete, "op " << i << " not complete");
      TIERCC_CHECK(samePattern(recvBufs[i].data(), peer * 1000 + i, sizeOf(i)), "message " << i << " corrupted or out of order");
    }
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// Empty messages and 64 MiB messages, both directions at once, contents checked.
TEST_P(TransportConformance, ZeroByteAndLargeMessages) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    const int peer = 1 - rank;
    std::vector<std::byte> big = pattern(rank + 1, kLarge), got(kLarge);
    std::vector<TransferOp> ops = {{peer, true, 1, nullptr, 0},
                                   {peer, false, 1, nullptr, 0},
                                   {peer, true, 2, big.data(), kLarge},
                                   {peer, false, 2, got.data(), kLarge},
                                   {peer, true, 3, nullptr, 0},
                                   {peer, false, 3, nullptr, 0}};
    for (TransferOp& op : ops) op.isSend ? rt.transport->isend(op) : rt.transport->irecv(op);
    rt.transport->wait(pointers(ops), Deadline::after(30s), "large");
    TIERCC_CHECK(samePattern(got.data(), peer + 1, kLarge), "64 MiB message corrupted");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// Hundreds of operations in flight at once, waited on together.
TEST_P(TransportConformance, ManyOutstandingOperations) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    const int peer = 1 - rank, count = 256;
    const std::size_t len = 4096;
    std::vector<std::byte> out(count * len), in(count * len);
    for (int i = 0; i < count; ++i) std::memset(out.data() + i * len, (rank * 64 + i) & 0xff, len);
    std::vector<TransferOp> ops;
    for (int i = 0; i < count; ++i) ops.push_back({peer, true, static_cast<std::uint64_t>(i), out.data() + i * len, len});
    for (int i = 0; i < count; ++i) ops.push_back({peer, false, static_cast<std::uint64_t>(i), in.data() + i * len, len});
    for (TransferOp& op : ops) op.isSend ? rt.transport->isend(op) : rt.transport->irecv(op);
    rt.transport->wait(pointers(ops), Deadline::after(20s), "outstanding");
    for (int i = 0; i < count; ++i)
      TIERCC_CHECK(in[i * len] == std::byte((peer * 64 + i) & 0xff) && in[i * len + len - 1] == in[i * len],
                   "message " << i << " wrong");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// A receive whose tag or length differs from the message: InvalidArgument (the ranks called
// different operations, not a fault of the network) naming the sender.
void mismatchJob(const std::string& name, std::uint64_t recvTag, std::size_t recvLen) {
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    std::vector<std::byte> buf(256);
    if (rank == 0) {
      TransferOp send{1, true, 5, buf.data(), 128};
      rt.transport->isend(send);
      rt.transport->wait({&send}, Deadline::after(10s), "mismatch send");
      rt.awaitSignal("checked");
      return;
    }
    TransferOp recv{0, false, recvTag, buf.data(), recvLen};
    rt.transport->irecv(recv);
    expectError(ErrorCode::InvalidArgument, "mismatch recv", "rank 0", 10s,
                [&] { rt.transport->wait({&recv}, Deadline::after(10s), "mismatch recv"); });
    rt.signal("checked");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST_P(TransportConformance, TagMismatchNamesThePeer) { mismatchJob(backend(), 6, 128); }
TEST_P(TransportConformance, LongerMessageThanReceiveNamesThePeer) { mismatchJob(backend(), 5, 100); }
TEST_P(TransportConformance, ShorterMessageThanReceiveNamesThePeer) { mismatchJob(backend(), 5, 200); }

// One-sided writes land in the peer's registered region, notify it with the immediate and byte
// count in issue order, and a write past the region is refused before anything is sent.
TEST_P(TransportConformance, WriteWithNotification) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    const std::size_t regionBytes = 1u << 20, first = 300000, second = 5000;
    if (rank == 1) {
      std::vector<std::byte> target(regionBytes, std::byte{0x5a});
      auto region = rt.transport->registerMemory(target.data(), target.size());
      TIERCC_CHECK(region->data() == target.data() && region->size() == regionBytes, "region bounds");
      Bytes desc = region->descriptor();
      rt.store->set("test/desc", desc);
      std::vector<TransferOp> notes(3);
      for (TransferOp& n : notes) {
        n.peer = 0;
        rt.transport->inotify(n);
      }
      rt.transport->wait(pointers(notes), Deadline::after(20s), "notify");
      TIERCC_CHECK(notes[0].tag == 0xdeadbeefu && notes[0].len == first, "first notification: imm " << notes[0].tag << " len " << notes[0].len);
      TIERCC_CHECK(notes[1].tag == 7u && notes[1].len == second, "second notification: imm " << notes[1].tag << " len " << notes[1].len);
      TIERCC_CHECK(notes[2].tag == 8u && notes[2].len == 0, "empty write notification: imm " << notes[2].tag << " len " << notes[2].len);
      TIERCC_CHECK(samePattern(target.data() + 4096, 11, first), "first write not in place");
      TIERCC_CHECK(samePattern(target.data() + regionBytes - second, 12, second), "second write not in place");
      TIERCC_CHECK(target[4095] == std::byte{0x5a} && target[4096 + first] == std::byte{0x5a}, "write spilled over");
      rt.signal("checked");
      return;
    }
    Bytes desc = rt.store->get("test/desc", Deadline::after(20s));
    std::vector<std::byte> a = pattern(11, first), b = pattern(12, second);
    auto ra = rt.transport->registerMemory(a.data(), a.size());
    auto rb = rt.transport->registerMemory(b.data(), b.size());
    WriteOp bad;
    bad.peer = 1;
    bad.buf = b.data();
    bad.len = 100;
    bad.remote = desc;
    bad.remoteOffset = regionBytes - 10;
    expectError(ErrorCode::InvalidArgument, "iwrite", "exceed", 5s, [&] { rt.transport->iwrite(bad); });
    std::vector<WriteOp> writes(3);
    writes[0].buf = a.data(), writes[0].len = first, writes[0].remoteOffset = 4096, writes[0].imm = 0xdeadbeef;
    writes[1].buf = b.data(), writes[1].len = second, writes[1].remoteOffset = regionBytes - second, writes[1].imm = 7;
    writes[2].buf = b.data(), writes[2].len = 0, writes[2].remoteOffset = regionBytes, writes[2].imm = 8;
    std::vector<TransferOp*> pending;
    for (WriteOp& w : writes) {
      w.peer = 1;
      w.remote = desc;
      rt.transport->iwrite(w);
      pending.push_back(&w);
    }
    rt.transport->wait(pending, Deadline::after(20s), "write");
    rt.awaitSignal("checked");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// Registering inside a live region hits the cache; invalidation makes the next one new.
TEST_P(TransportConformance, RegistrationCache) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    std::vector<std::byte> buf(1 << 20);
    auto whole = rt.transport->registerMemory(buf.data(), buf.size());
    auto inside = rt.transport->registerMemory(buf.data() + 100, 1000);
    TIERCC_CHECK(inside.get() == whole.get(), "sub-range of a live region was registered anew");
    TIERCC_CHECK(!whole->descriptor().empty(), "empty descriptor");
    rt.transport->invalidateMemory(buf.data() + 500, 10);
    auto fresh = rt.transport->registerMemory(buf.data() + 100, 1000);
    TIERCC_CHECK(fresh.get() != whole.get(), "invalidated region returned from the cache");
    TIERCC_CHECK(fresh->data() == buf.data() + 100 && fresh->size() == 1000, "fresh region bounds");
    TIERCC_CHECK(whole->data() == buf.data() && whole->size() == buf.size(), "held region changed");
    auto again = rt.transport->registerMemory(buf.data() + 200, 10);
    TIERCC_CHECK(again.get() == fresh.get(), "sub-range of the fresh region missed the cache");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// test() on an operation that cannot complete yet answers false without waiting for it.
TEST_P(TransportConformance, TestDoesNotBlock) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    int value = rank == 1 ? 42 : 0;
    TransferOp op{1 - rank, rank == 1, 3, reinterpret_cast<std::byte*>(&value), sizeof(value)};
    if (rank == 1) {
      rt.awaitSignal("tested");
      rt.transport->isend(op);
      rt.transport->wait({&op}, Deadline::after(20s), "send");
      rt.awaitSignal("received");
      return;
    }
    rt.transport->irecv(op);
    auto start = Clock::now();
    for (int i = 0; i < 10; ++i) TIERCC_CHECK(!rt.transport->test(op, "test"), "completed before it was sent");
    TIERCC_CHECK(Clock::now() - start < 2s, "test() blocked");
    rt.signal("tested");
    rt.transport->wait({&op}, Deadline::after(20s), "recv");
    TIERCC_CHECK(rt.transport->test(op, "test") && value == 42, "value " << value);
    rt.signal("received");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// A peer killed during a 64 MiB exchange: the survivor's wait fails with PeerFailure naming it,
// long before the 30 s deadline.
TEST_P(TransportConformance, PeerKilledMidTransfer) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    const int peer = 1 - rank;
    std::vector<std::byte> out(kLarge, std::byte{1}), in(kLarge);
    int never = 0;
    std::vector<TransferOp> ops = {{peer, true, 1, out.data(), kLarge},
                                   {peer, false, 1, in.data(), kLarge},
                                   {peer, false, 2, reinterpret_cast<std::byte*>(&never), sizeof(never)}};
    for (TransferOp& op : ops) op.isSend ? rt.transport->isend(op) : rt.transport->irecv(op);
    if (rank == 1) {
      rt.awaitSignal("started");
      for (int i = 0; i < 3; ++i) rt.transport->test(ops[1], "victim");
      kill(getpid(), SIGKILL);
    }
    rt.transport->test(ops[0], "survivor");
    rt.signal("started");
    expectError(ErrorCode::PeerFailure, "survivor", "rank 1", 10s,
                [&] { rt.transport->wait(pointers(ops), Deadline::after(30s), "survivor"); });
    // The connection stays failed: a later operation with the peer fails at once.
    expectError(ErrorCode::PeerFailure, "", "rank 1", 2s, [&] {
      TransferOp again{peer, false, 3, reinterpret_cast<std::byte*>(&never), sizeof(never)};
      rt.transport->irecv(again);
      rt.transport->wait({&again}, Deadline::after(30s), "again");
    });
  }, job());
  ASSERT_EQ(result.ranks.size(), 2u);
  EXPECT_TRUE(result.ranks[0].ok()) << result.report();
  EXPECT_TRUE(WIFSIGNALED(result.ranks[1].status)) << result.report();
}

// A receive nobody answers times out at its deadline, naming the peer it waited for.
TEST_P(TransportConformance, ReceiveTimesOutNamingThePeer) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    if (rank == 1) {
      rt.awaitSignal("checked");
      return;
    }
    int value = 0;
    TransferOp op{1, false, 9, reinterpret_cast<std::byte*>(&value), sizeof(value)};
    rt.transport->irecv(op);
    auto start = Clock::now();
    expectError(ErrorCode::Timeout, "lonely recv", "rank 1", 5s,
                [&] { rt.transport->wait({&op}, Deadline::after(500ms), "lonely recv"); });
    TIERCC_CHECK(Clock::now() - start >= 450ms, "timed out before the deadline");
    rt.signal("checked");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

// abort() from another thread wakes a rank blocked in wait() with Aborted.
TEST_P(TransportConformance, AbortWakesAWaiter) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    RankTransport rt = connect(name, rank, 2, addr);
    if (rank == 1) {
      rt.awaitSignal("checked");
      return;
    }
    int value = 0;
    TransferOp op{1, false, 9, reinterpret_cast<std::byte*>(&value), sizeof(value)};
    rt.transport->irecv(op);
    std::thread aborter([&] {
      std::this_thread::sleep_for(200ms);
      rt.transport->abort();
    });
    struct Joiner {  // joins before a failed check unwinds past the thread
      std::thread& t;
      ~Joiner() { t.join(); }
    } joiner{aborter};
    expectError(ErrorCode::Aborted, "aborted recv", "", 5s,
                [&] { rt.transport->wait({&op}, Deadline::after(30s), "aborted recv"); });
    rt.signal("checked");
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
}

std::string backendName(const ::testing::TestParamInfo<std::string>& param) { return param.param; }

INSTANTIATE_TEST_SUITE_P(Backends, TransportConformance, ::testing::ValuesIn(transportNames()), backendName);

}  // namespace
}  // namespace tiercc::test
