// The staging window at init (TIERCC_SHM_CHUNK): asked for in bytes, or auto, the cost model's
// (plan/window_size.hpp), the same on every rank; and malformed settings fail, naming themselves.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "runtime/tier_model.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {
namespace {

using test::JobOptions;
using test::JobResult;
using test::runRanks;

// Sets one variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST(WindowSetting, AutoByDefaultAndBadValuesNameThemselves) {
  const WindowSetting byDefault = windowSettingFromParams();
  EXPECT_EQ(byDefault.asked, 0u);
  EXPECT_EQ(byDefault.most, std::size_t{64} << 20);
  EXPECT_EQ(byDefault.describe(), "auto<=67108864");
  {
    ScopedEnv asked("TIERCC_SHM_CHUNK", "65536");
    EXPECT_EQ(windowSettingFromParams().asked, 65536u);
    EXPECT_EQ(windowSettingFromParams().resolve(Shape::uniformDomains(2, 2), TierModel{}), 65536u);
  }
  const std::pair<const char*, const char*> bad[] = {{"TIERCC_SHM_CHUNK", "lots"},
                                                     {"TIERCC_SHM_CHUNK", "100"},
                                                     {"TIERCC_SHM_CHUNK", "4100"},
                                                     {"TIERCC_SHM_CHUNK_MAX", "auto"},
                                                     {"TIERCC_SHM_CHUNK_MAX", "2048"}};
  for (const auto& [name, value] : bad) {
    ScopedEnv set(name, value);
    try {
      windowSettingFromParams();
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

// Each rank's description of its model, gathered: they must all be the same.
std::string agreedModel(Communicator& c) {
  constexpr std::size_t kLen = 512;
  const std::string mine = c.tierModel();
  TIERCC_CHECK(mine.size() < kLen, "model description too long: " << mine);
  std::vector<char> in(kLen, 0), out(kLen * c.size());
  mine.copy(in.data(), mine.size());
  c.allgather(in.data(), out.data(), kLen, DataType::U8);
  for (int r = 0; r < c.size(); ++r)
    TIERCC_CHECK(std::string(out.data() + r * kLen) == mine,
                 "rank " << r << " has '" << out.data() + r * kLen << "', this rank '" << mine << "'");
  return mine;
}

// 2 domains of 2 whose rails take 2 ms a message: a 4 MiB window holds less than one fragment's
// trip, so auto takes a larger one (up to TIERCC_SHM_CHUNK_MAX), every rank the same; fragments
// cut from a share of it run right.
void checkWindow(const std::vector<std::pair<std::string, std::string>>& extraEnv, const std::string& want) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "60s"},
            {"TIERCC_DOMAIN_SIZE", "2"},
            {"TIERCC_EMU_SCALEOUT_BW", "1GB/s"},
            {"TIERCC_EMU_SCALEOUT_LATENCY", "2ms"},
            {"TIERCC_TUNE_CACHE", "0"}};  // the same price on every machine
  jo.env.insert(jo.env.end(), extraEnv.begin(), extraEnv.end());
  JobResult result = runRanks(
      4,
      [&](int rank, const std::string& store) {
        Communicator c(store, 4, rank);
        const std::string model = agreedModel(c);
        TIERCC_CHECK(model.find(want) != std::string::npos, "'" << model << "' lacks '" << want << "'");
        for (std::size_t count : {std::size_t{1} << 10, std::size_t{3} << 20}) {
          std::vector<float> v(count, static_cast<float>(rank + 1));
          c.allreduce(v.data(), v.data(), count, DataType::F32, ReduceOp::Sum);
          for (std::size_t i : {std::size_t{0}, count / 2, count - 1})
            TIERCC_CHECK(v[i] == 10.0f, "allreduce of " << count << " gave " << v[i] << " at " << i);
          std::vector<float> send(count), recv(count);
          for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<float>(rank * 4 + i * 4 / count);
          c.alltoall(send.data(), recv.data(), count / 4, DataType::F32);
          for (int from = 0; from < 4; ++from)
            TIERCC_CHECK(recv[from * (count / 4)] == static_cast<float>(from * 4 + rank),
                         "alltoall of " << count << ": block from " << from << " has " << recv[from * (count / 4)]);
        }
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(WindowAtInit, AutoTakesALargerWindowWhereTheRailsAreSlowToAnswer) {
  checkWindow({}, "window 16777216 B per rank (auto)");
}

TEST(WindowAtInit, AutoStopsAtTheMostItMayTake) {
  checkWindow({{"TIERCC_SHM_CHUNK_MAX", "8388608"}}, "window 8388608 B per rank (auto)");
}

TEST(WindowAtInit, AskedForIsTaken) {
  checkWindow({{"TIERCC_SHM_CHUNK", "1048576"}}, "window 1048576 B per rank (TIERCC_SHM_CHUNK)");
}

}  // namespace
}  // namespace tiercc
