// The timeline (TIERCC_TRACE=DIR): each rank writes Chrome trace-event JSON, one span per
// operation and one per part of each plan step it ran (its tier, fragment and bytes), into
// DIR/tiercc-trace-<job>-<communicator>-rank<r>.json. One event per line, so that tiercc-run can
// merge the ranks' files into one (DIR/trace.json) that Perfetto and chrome://tracing open, and
// tiercc-trace can draw it. Lanes: a rank is a process; its operations, scale-up steps and
// scale-out steps are three threads of it. Events are buffered and written in blocks.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "exec/call.hpp"
#include "exec/context.hpp"
#include "plan/plan.hpp"
#include "plan/topology.hpp"

namespace tiercc {

class TraceWriter {
 public:
  /// Opens the rank's file in `dir` (created if missing); Error{SystemError} if it cannot.
  TraceWriter(const std::string& dir, const std::string& fileTag, const Topology& topo, const std::string& comm);
  ~TraceWriter();  // writes what is buffered

  /// Where the executor puts the running call's step spans.
  StepTrace& steps() { return steps_; }
  /// The call that just ended (`plan`: the one that ran, null if none did), and its steps'
  /// spans, which are then cleared.
  void call(const std::string& what, const CallArgs& args, const Plan* plan, std::int64_t beginNs,
            std::int64_t endNs, bool ok);
  const std::string& path() const { return path_; }

 private:
  void flush();

  std::string path_;
  std::ofstream out_;
  std::string buffer_;
  StepTrace steps_;
  int pid_ = 0;
};

}  // namespace tiercc
