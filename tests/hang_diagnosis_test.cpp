// Hangs named in the error: every rank's published progress says which rank holds a collective up
// (it never entered it, or entered a different call), and the flight recorder shows each rank's
// last operations. The pure parts are checked on made-up progress; the rest on real 2x4 jobs.
#include "runtime/hang_diagnosis.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/errors.hpp"
#include "runtime/progress.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

using Clock = std::chrono::steady_clock;

Topology twoByFour(int rank) {
  std::vector<int> domainOf = {0, 0, 0, 0, 1, 1, 1, 1};
  return Topology::fromDomainKeys(domainOf, rank);
}

CallSignature allreduceOf(std::size_t count) {
  return {Collective::AllReduce, count, DataType::F32, ReduceOp::Sum, -1};
}

Progress at(std::int64_t entered, std::int64_t completed, CallSignature call, OpState state) {
  Progress p;
  p.entered = entered;
  p.completed = completed;
  p.completedAtMs = 1000;
  p.current = call;
  p.state = state;
  return p;
}

TEST(Progress, EncodesAndDecodesEveryField) {
  Progress p = at(10, 9, {Collective::Broadcast, 77, DataType::BF16, ReduceOp::Sum, 3}, OpState::Running);
  p.step = 2;
  p.steps = 6;
  p.waitingOn = 5;
  p.waitTier = Tier::ScaleOut;
  const auto back = Progress::decode(p.encode());
  ASSERT_TRUE(back) << p.encode();
  EXPECT_EQ(back->encode(), p.encode());
  EXPECT_EQ(back->entered, 10);
  EXPECT_EQ(back->current.root, 3);
  EXPECT_EQ(back->waitTier, Tier::ScaleOut);
  EXPECT_FALSE(Progress::decode("17"));
  EXPECT_FALSE(Progress::decode("e=1 c=0 t=0 s=9 k=0 n=1 d=0 o=0 r=-1 st=0/0 w=-1 wt=0 p=0"));  // no such state
}

TEST(Progress, SignaturesCompareOnlyWhatTheCollectiveUses) {
  CallSignature a = allreduceOf(8), b = allreduceOf(8);
  b.root = 4;  // an allreduce has no root
  EXPECT_TRUE(a.matches(b));
  b.op = ReduceOp::Max;
  EXPECT_FALSE(a.matches(b));
  EXPECT_FALSE(a.matches(allreduceOf(9)));
  CallSignature v1{Collective::AllToAllv, 0, DataType::F32}, v2{Collective::AllToAllv, 0, DataType::F32};
  EXPECT_TRUE(v1.matches(v2));
  EXPECT_EQ(a.describe(10), "allreduce #10 (8 x f32, sum)");
  EXPECT_EQ((CallSignature{Collective::Broadcast, 4, DataType::I32, ReduceOp::Sum, 2}).describe(3),
            "broadcast #3 (4 x i32, root 2)");
}

TEST(HangDiagnosis, NamesTheRankThatNeverEnteredAndWhoWaits) {
  std::vector<std::optional<Progress>> all(8);
  for (int r = 0; r < 8; ++r) all[r] = at(10, 9, allreduceOf(64), OpState::Running);
  all[5] = at(9, 9, allreduceOf(64), OpState::Done);
  all[5]->completedAtMs = 5200;
  const std::string d = diagnoseHang(twoByFour(0), 10, allreduceOf(64), all, 10000);
  EXPECT_NE(d.find("rank 5 (domain 1, local rank 1) has not entered allreduce #10 (64 x f32, sum); it completed #9 "
                   "4.8 s ago"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("waiting in allreduce #10 (64 x f32, sum): ranks 0-4, 6, 7"), std::string::npos) << d;
}

TEST(HangDiagnosis, NamesAMismatchWithBothCalls) {
  std::vector<std::optional<Progress>> all(8);
  for (int r = 0; r < 8; ++r) all[r] = at(3, 2, allreduceOf(64), OpState::Running);
  all[6] = at(3, 2, {Collective::Broadcast, 64, DataType::F32, ReduceOp::Sum, 0}, OpState::Running);
  const std::string d = diagnoseHang(twoByFour(1), 3, allreduceOf(64), all, 10000);
  EXPECT_NE(d.find("rank 6 (domain 1, local rank 2) called broadcast #3 (64 x f32, root 0) where ranks 0-5, 7 "
                   "called allreduce #3 (64 x f32, sum): the ranks' calls do not match"),
            std::string::npos)
      << d;
  // Seen from the odd rank itself, the culprit is the same.
  const std::string fromSix = diagnoseHang(twoByFour(6), 3, all[6]->current, all, 10000);
  EXPECT_NE(fromSix.find("rank 6 (domain 1, local rank 2) called broadcast #3"), std::string::npos) << fromSix;
}

TEST(HangDiagnosis, SaysWhereALateRankIsAndWhoPublishedNothing) {
  std::vector<std::optional<Progress>> all(8);
  for (int r = 0; r < 8; ++r) all[r] = at(4, 3, allreduceOf(1), OpState::Running);
  all[2] = at(3, 2, {Collective::Barrier}, OpState::Running);
  all[2]->step = 1;
  all[2]->steps = 3;
  all[2]->waitingOn = 7;
  all[2]->waitTier = Tier::ScaleOut;
  all[7].reset();
  all[6] = Progress::left();
  const std::string d = diagnoseHang(twoByFour(0), 4, allreduceOf(1), all, 10000);
  EXPECT_NE(d.find("rank 2 (domain 0, local rank 2) has not entered allreduce #4 (1 x f32, sum); it is still in "
                   "barrier #3, step 2 of 3, waiting on rank 7 (scale-out)"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("no progress published by ranks 7; ranks 6 have left"), std::string::npos) << d;
  // Everyone in the same call: the waits' own messages say the rest.
  for (int r = 0; r < 8; ++r) all[r] = at(4, 3, allreduceOf(1), OpState::Running);
  EXPECT_EQ(diagnoseHang(twoByFour(0), 4, allreduceOf(1), all, 10000), "");
  EXPECT_EQ(rankRanges({0, 1, 2, 4, 5, 9}), "0-2, 4, 5, 9");
}

// Everyone in the same call, rank 0 stuck in a step (TIERCC_FAULT=stall): rank 1 waits on it on
// the scale-up tier, ranks 2 and 3 on rank 1 and 0 across; rank 7, whose wait timed out, names
// rank 0, not the peer it waited for. A wait that ends at this rank names nobody.
TEST(HangDiagnosis, FollowsTheWaitsToTheRankStuckInAStep) {
  std::vector<std::optional<Progress>> all(8);
  for (int r = 0; r < 8; ++r) all[r] = at(10, 9, allreduceOf(64), OpState::Running);
  for (int r = 0; r < 8; ++r) all[r]->steps = 5;
  all[0]->step = 2;
  all[1]->waitingOn = 0;
  all[2]->waitingOn = 1;
  all[3]->waitingOn = 0;
  all[4]->waitingOn = 7;
  const std::string d = diagnoseHang(twoByFour(7), 10, allreduceOf(64), all, 10000);
  EXPECT_NE(d.find("rank 0 (domain 0, local rank 0) is in allreduce #10 (64 x f32, sum), step 3 of 5, and waits on "
                   "no rank: it is stuck in that step (ranks 1-3 wait on it, directly or through others)"),
            std::string::npos)
      << d;
  EXPECT_EQ(d.find("rank 7 (domain 1, local rank 3) is in"), std::string::npos) << d;
}

std::string readWhole(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A folder of its own for the flight recorders of one test's job.
std::filesystem::path freshDumpDir(const char* test) {
  const auto dir = std::filesystem::temp_directory_path() / concat("tiercc-", test, "-", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

JobOptions hangJob(const std::filesystem::path& dumps) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "5s"},
            {"TIERCC_DEBUG", "NONE"},
            {"TIERCC_DOMAIN_SIZE", "4"},
            {"TIERCC_FLIGHT_RECORDER_DIR", dumps.string()}};
  jo.timeout = std::chrono::seconds(60);
  return jo;
}

// Runs allreduce #9 (after nine good ones), which must fail within `limit` (counted from its
// start), with every needle in the message: as a timeout on the ranks that time out, or as a peer
// failure on those that hear the first one's verdict before their own deadline.
// `code`: Timeout or PeerFailure for a rank that never came (the ranks that wait, and those that
// hear of it), InvalidArgument for a rank that called something else (a caller's error).
void expectTenthFails(Communicator& comm, const std::vector<std::string>& needles, std::chrono::milliseconds limit,
                      bool callsDiffer = false) {
  std::vector<float> buf(4096, 1.0f);
  const auto start = Clock::now();
  try {
    comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
  } catch (const Error& e) {
    const auto took = Clock::now() - start;
    const std::string msg = e.what();
    TIERCC_CHECK(callsDiffer ? e.code() == ErrorCode::InvalidArgument
                             : e.code() == ErrorCode::Timeout || e.code() == ErrorCode::PeerFailure,
                 "error code " << toString(e.code()) << ": " << msg);
    for (const std::string& needle : needles)
      TIERCC_CHECK(msg.find(needle) != std::string::npos,
                   "rank " << comm.rank() << ": no '" << needle << "' in: " << msg);
    TIERCC_CHECK(took < limit, "took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    return;
  }
  TIERCC_CHECK(false, "allreduce #9 succeeded without rank 5");
}

void nineAllreduces(Communicator& comm) {
  std::vector<float> buf(4096, 1.0f);
  for (int i = 0; i < 9; ++i) comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
}

// The case: 2x4, TIERCC_TIMEOUT=5s, rank 5 alive but skipping allreduce #9. Every one of
// the other seven raises within 6 s naming rank 5 as the rank that has not entered it, whatever
// peer it was itself waiting for.
// Each rank's flight recorder was dumped when it failed: allreduce #9 is the last entry, still
// running, with the peer it waited on.
TEST(Hang, SkippedCollectiveIsNamedOnEveryRank) {
  const auto dumps = freshDumpDir("hang-skip");
  JobResult result = runRanks(
      8,
      [&dumps](int rank, const std::string& store) {
        Communicator comm(store, 8, rank);
        nineAllreduces(comm);
        if (rank == 5) {
          sleep(8);  // alive and beating, but not calling
          return;
        }
        expectTenthFails(
            comm, {"rank 5 (domain 1, local rank 1) has not entered allreduce #9 (4096 x f32, sum); it completed #8"},
            std::chrono::milliseconds(6000));
        std::string json;
        for (const auto& f : std::filesystem::directory_iterator(dumps))
          if (f.path().string().ends_with("-rank" + std::to_string(rank) + ".json")) json = readWhole(f.path());
        TIERCC_CHECK(json.find("{\"seq\":8,\"kind\":\"allreduce\"") != std::string::npos,
                     "no #8 in the dump: " << json);
        const auto last = json.find("{\"seq\":9,\"kind\":\"allreduce\"");
        TIERCC_CHECK(last != std::string::npos, "no #9 in the dump: " << json);
        const std::string entry = json.substr(last);
        TIERCC_CHECK(entry.find("\"state\":\"running\"") != std::string::npos, entry);
        TIERCC_CHECK(entry.find("\"waiting_on\":") != std::string::npos, entry);
        TIERCC_CHECK(json.find("has not entered allreduce #9") != std::string::npos, "the reason is not in the dump");
      },
      hangJob(dumps));
  EXPECT_TRUE(result.ok()) << result.report();
  std::filesystem::remove_all(dumps);
}

// Rank 5 calls a broadcast where the others call allreduce #9: they are named as a mismatch,
// with both calls, on every rank.
TEST(Hang, MismatchedCallIsNamedWithBothCalls) {
  const auto dumps = freshDumpDir("hang-mismatch");
  JobResult result = runRanks(
      8,
      [](int rank, const std::string& store) {
        Communicator comm(store, 8, rank);
        nineAllreduces(comm);
        if (rank == 5) {
          std::vector<float> buf(4096, 1.0f);
          try {
            comm.broadcast(buf.data(), buf.data(), buf.size(), DataType::F32, 0);
          } catch (const Error&) {
            // It fails too; the others' messages are what this test reads.
          }
          sleep(2);
          return;
        }
        expectTenthFails(comm,
                         {"rank 5 (domain 1, local rank 1) called broadcast #9 (4096 x f32, root 0)",
                          "where ranks 0-4, 6, 7 called allreduce #9 (4096 x f32, sum): the ranks' calls do not match"},
                         std::chrono::milliseconds(6000), true);
      },
      hangJob(dumps));
  EXPECT_TRUE(result.ok()) << result.report();
  std::filesystem::remove_all(dumps);
}

// SIGUSR1 makes every rank write its ring without stopping: the last N operations, oldest first,
// each with its state; the job goes on afterwards.
TEST(FlightRecorder, DumpsTheLastOperationsOnSIGUSR1) {
  const auto dir = std::filesystem::temp_directory_path() / ("tiercc-flight-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  JobOptions jo;
  jo.env = {{"TIERCC_FLIGHT_RECORDER", "4"}, {"TIERCC_FLIGHT_RECORDER_DIR", dir.string()}};
  jo.timeout = std::chrono::seconds(60);
  JobResult result = runRanks(
      2,
      [dir](int rank, const std::string& store) {
        Communicator comm(store, 2, rank);
        std::vector<float> buf(64, 1.0f);
        for (int i = 0; i < 6; ++i) comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
        comm.broadcast(buf.data(), buf.data(), buf.size(), DataType::F32, 1);
        raise(SIGUSR1);
        std::filesystem::path dump;
        for (int i = 0; i < 100 && dump.empty(); ++i, usleep(50 * 1000))
          for (const auto& f : std::filesystem::directory_iterator(dir))
            if (f.path().string().ends_with("-rank" + std::to_string(rank) + ".json")) dump = f.path();
        TIERCC_CHECK(!dump.empty(), "no dump in " << dir << " within 5 s of SIGUSR1");
        usleep(100 * 1000);  // the file is written whole, but may be in progress
        const std::string json = readWhole(dump);
        TIERCC_CHECK(json.find("\"reason\":\"SIGUSR1\"") != std::string::npos, json);
        TIERCC_CHECK(json.find("\"capacity\":4") != std::string::npos, json);
        TIERCC_CHECK(json.find("\"seq\":2,") == std::string::npos, "the ring kept more than 4: " << json);
        TIERCC_CHECK(json.find("{\"seq\":3,\"kind\":\"allreduce\"") != std::string::npos, json);
        TIERCC_CHECK(json.find("{\"seq\":6,\"kind\":\"broadcast\",\"call\":\"broadcast #6 (64 x f32, root 1)\"") !=
                         std::string::npos,
                     json);
        TIERCC_CHECK(json.find("\"state\":\"running\"") == std::string::npos, json);
        comm.barrier();  // the job goes on
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
  std::filesystem::remove_all(dir);
}

std::string runCommand(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  TIERCC_CHECK(pipe, "cannot run " << command);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) output.append(buf, n);
  TIERCC_CHECK(::pclose(pipe) == 0, command << " failed:\n" << output);
  return output;
}

// tiercc-info --job reads a live job from its store: while rank 3 is late for allreduce #1, it
// shows every rank and names rank 3 as what holds the job up; then the job completes.
TEST(LiveJob, TierccInfoShowsEveryRankAndWhatHoldsThemUp) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "2"}, {"TIERCC_HEARTBEAT_PERIOD", "200ms"}, {"TIERCC_DEBUG", "NONE"}};
  jo.timeout = std::chrono::seconds(60);
  JobResult result = runRanks(
      4,
      [](int rank, const std::string& store) {
        Communicator comm(store, 4, rank);
        std::vector<float> buf(1024, 1.0f);
        comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
        if (rank == 3) {
          sleep(4);  // late, but alive: the others wait in allreduce #1
        } else if (rank == 0) {
          const char* bin = std::getenv("TIERCC_BIN_DIR");
          TIERCC_CHECK(bin, "TIERCC_BIN_DIR is not set (ctest sets it)");
          Work w = comm.allreduceAsync(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
          usleep(1500 * 1000);  // the others' beats now say they are in #1
          std::string shown;
          try {
            shown = runCommand(std::string(bin) + "/tiercc-info --job " + store);
          } catch (...) {
            w.wait();  // the allreduce still writes into buf: it must end before buf goes
            throw;
          }
          w.wait();
          std::printf("%s", shown.c_str());
          for (const std::string& needle : {std::string("4 ranks, 2 domains"),
                                            std::string("held up: rank 3 (domain 1, local rank 1) has not entered "
                                                        "allreduce #1 (1024 x f32, sum); it completed #0"),
                                            std::string("allreduce #0 (1024 x f32, sum)      done"),
                                            std::string("allreduce #1 (1024 x f32, sum)      running")})
            TIERCC_CHECK(shown.find(needle) != std::string::npos, "no '" << needle << "' in:\n" << shown);
          TIERCC_CHECK(std::count(shown.begin(), shown.end(), '\n') >= 6, shown);
          return;
        }
        comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
