// Process identity and liveness through /proc (see ucx_liveness.hpp).
#include "transport/ucx/ucx_liveness.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace tiercc::ucxnet {

namespace {

struct ProcStat {
  char state = '?';
  std::uint64_t startTime = 0;
};

// /proc/<pid>/stat: "pid (comm) state ..." where comm may hold spaces; starttime is field 22.
std::optional<ProcStat> readStat(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  ProcStat stat;
  rest >> stat.state;
  std::string skip;
  for (int field = 4; field < 22 && rest; ++field) rest >> skip;
  rest >> stat.startTime;
  if (!rest) return std::nullopt;
  return stat;
}

std::string readBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id.empty() ? "unknown" : id;
}

}  // namespace

ProcessIdentity ProcessIdentity::self() {
  ProcessIdentity me;
  me.bootId = readBootId();
  me.pid = static_cast<int>(::getpid());
  if (auto stat = readStat(me.pid)) me.startTime = stat->startTime;
  return me;
}

std::string ProcessIdentity::serialize() const {
  return bootId + " " + std::to_string(pid) + " " + std::to_string(startTime);
}

std::optional<ProcessIdentity> ProcessIdentity::parse(const std::string& text) {
  std::istringstream in(text);
  ProcessIdentity id;
  if (!(in >> id.bootId >> id.pid >> id.startTime)) return std::nullopt;
  return id;
}

bool ProcessIdentity::alive() const {
  auto stat = readStat(pid);
  return stat && stat->state != 'Z' && stat->state != 'X' && stat->startTime == startTime;
}

}  // namespace tiercc::ucxnet
