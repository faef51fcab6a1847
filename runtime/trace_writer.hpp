// The timeline (TIERCC_TRACE=DIR): each rank writes Chrome trace-event JSON, one span per
// operation and one per part of each plan step it ran (its tier, rail, fragment and bytes), into
// DIR/tiercc-trace-<job>-<communicator>-rank<r>.json. One event per line, so that tiercc-run can
// merge the ranks' files into one (DIR/trace.json) that Perfetto and chrome://tracing open, and
// tiercc-trace can draw it. Lanes: a rank is a process; its operations, scale-up steps and
// scale-out steps are three threads of it.
//
// Calls record raw spans (a few stores each); the text is made when the records fill a block
// and at the end, so that a traced call pays for its clock reads, not for formatting.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "exec/call.hpp"
#include "exec/context.hpp"
#include "plan/plan.hpp"
#include "plan/topology.hpp"

namespace tiercc {

class TraceWriter {
 public:
  /// Opens the rank's file in `dir` (created if missing); Error{SystemError} if it cannot.
  TraceWriter(const std::string& dir, const std::string& fileTag, const Topology& topo, const std::string& comm);
  ~TraceWriter();  // writes what is recorded

  /// Where the executor appends the running call's step spans.
  StepTrace& steps() { return steps_; }
  /// The call that just ended: `name` as the API names it (static storage), `plan` the plan that
  /// ran (null if none did); its spans are the ones appended since the previous call.
  void call(const char* name, std::uint64_t seq, const CallArgs& args, const Plan* plan, std::int64_t beginNs,
            std::int64_t endNs, bool ok);
  const std::string& path() const { return path_; }

 private:
  struct Operation {
    const char* name;
    std::uint64_t seq;
    Collective coll;
    int peer;
    std::size_t count;
    DataType dt;
    const Plan* plan;
    std::int64_t beginNs, endNs;
    bool ok;
    std::size_t firstSpan, endSpan;  // [first, end) of steps_.spans
  };
  /// Formats and writes every recorded operation and span, then forgets them.
  void flush();
  void format(const Operation& op);

  std::string path_;
  std::ofstream out_;
  std::string text_;
  StepTrace steps_;
  std::vector<Operation> operations_;
  int pid_ = 0;   // the rank: a process of the trace
  int rail_ = 0;  // its local rank: the rail its scale-out steps ride
};

}  // namespace tiercc
