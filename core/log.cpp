// Logging: levels and subsystems parsed once from TIERCC_DEBUG / TIERCC_DEBUG_SUBSYS.
// Lines are written whole with one write(2) so that the lines of many ranks do not interleave.
#include "core/log.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace tiercc::log {
namespace {

struct Settings {
  Level level = Level::Warn;
  unsigned subsysMask = ~0u;
};

std::atomic<int> gRank{-1};
std::once_flag gOnce;
Settings gSettings;

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

Level parseLevel(const char* text) {
  if (!text || !*text) return Level::Warn;
  std::string t = upper(text);
  if (t == "NONE" || t == "OFF") return Level::None;
  if (t == "INFO") return Level::Info;
  if (t == "TRACE") return Level::Trace;
  return Level::Warn;
}

unsigned subsysBit(const std::string& name) {
  static const std::pair<const char*, Subsys> kNames[] = {
      {"INIT", Subsys::Init}, {"SHM", Subsys::Shm},   {"NET", Subsys::Net},  {"COLL", Subsys::Coll},
      {"PLAN", Subsys::Plan}, {"STORE", Subsys::Store}, {"TUNE", Subsys::Tune}};
  if (name == "ALL") return ~0u;
  for (auto& [n, s] : kNames)
    if (name == n) return static_cast<unsigned>(s);
  return 0;
}

// "INIT,NET" selects those; "^SHM" selects all but SHM (NCCL's convention).
unsigned parseSubsys(const char* text) {
  if (!text || !*text) return ~0u;
  std::string t = upper(text);
  bool invert = !t.empty() && t[0] == '^';
  if (invert) t.erase(0, 1);
  unsigned mask = 0;
  size_t start = 0;
  while (start <= t.size()) {
    size_t comma = t.find(',', start);
    if (comma == std::string::npos) comma = t.size();
    mask |= subsysBit(t.substr(start, comma - start));
    start = comma + 1;
  }
  return invert ? ~mask : mask;
}

void load() {
  gSettings.level = parseLevel(std::getenv("TIERCC_DEBUG"));
  gSettings.subsysMask = parseSubsys(std::getenv("TIERCC_DEBUG_SUBSYS"));
}

const char* levelName(Level level) {
  switch (level) {
    case Level::Warn: return "WARN";
    case Level::Info: return "INFO";
    case Level::Trace: return "TRACE";
    default: return "";
  }
}

const char* subsysName(Subsys s) {
  switch (s) {
    case Subsys::Init: return "INIT";
    case Subsys::Shm: return "SHM";
    case Subsys::Net: return "NET";
    case Subsys::Coll: return "COLL";
    case Subsys::Plan: return "PLAN";
    case Subsys::Store: return "STORE";
    case Subsys::Tune: return "TUNE";
  }
  return "?";
}

}  // namespace

bool enabled(Level level, Subsys subsys) {
  std::call_once(gOnce, load);
  return static_cast<int>(level) <= static_cast<int>(gSettings.level) &&
         (gSettings.subsysMask & static_cast<unsigned>(subsys)) != 0;
}

void setRank(int rank) { gRank.store(rank); }

void reload() {
  std::call_once(gOnce, load);
  load();
}

Line::Line(Level level, Subsys subsys) : level_(level), subsys_(subsys) {}

Line::~Line() {
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  std::string text = std::string(host) + ":" + std::to_string(getpid());
  int rank = gRank.load();
  if (rank >= 0) text += ":r" + std::to_string(rank);
  text += std::string(" tiercc ") + levelName(level_) + " " + subsysName(subsys_) + " " + out_.str();
  if (text.empty() || text.back() != '\n') text += '\n';
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace tiercc::log
