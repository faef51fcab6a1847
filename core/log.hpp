// Logging by level and subsystem (TIERCC_DEBUG, TIERCC_DEBUG_SUBSYS), checked before formatting.
// Every line is prefixed with host, pid and rank:  "host:pid:r3 tiercc INFO INIT message".
#pragma once

#include <sstream>
#include <string>

namespace tiercc::log {

enum class Level : int { None = 0, Warn = 1, Info = 2, Trace = 3 };
enum class Subsys : unsigned { Init = 1u << 0, Shm = 1u << 1, Net = 1u << 2, Coll = 1u << 3,
                               Plan = 1u << 4, Store = 1u << 5, Tune = 1u << 6 };

/// True when lines of this level and subsystem are printed (reads the environment once).
bool enabled(Level level, Subsys subsys);
/// Sets the rank shown in the prefix of this process's lines.
void setRank(int rank);
/// Re-reads TIERCC_DEBUG and TIERCC_DEBUG_SUBSYS (tests).
void reload();

/// One log line: collects text and writes it to stderr, whole, when destroyed.
class Line {
 public:
  Line(Level level, Subsys subsys);
  ~Line();
  std::ostream& stream() { return out_; }

 private:
  Level level_;
  Subsys subsys_;
  std::ostringstream out_;
};

}  // namespace tiercc::log

#define TIERCC_LOG(level, subsys)                                                           \
  if (!::tiercc::log::enabled(::tiercc::log::Level::level, ::tiercc::log::Subsys::subsys)) \
    ;                                                                                       \
  else                                                                                      \
    ::tiercc::log::Line(::tiercc::log::Level::level, ::tiercc::log::Subsys::subsys).stream()
