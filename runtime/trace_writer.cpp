// Chrome trace events (see trace_writer.hpp): "X" (complete) events with ts and dur in
// microseconds of the steady clock, which every process on a host shares.
#include "runtime/trace_writer.hpp"

#include <sys/stat.h>

#include <cstdio>

#include "core/errors.hpp"

namespace tiercc {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
enum Lane { kCalls = 0, kScaleUp = 1, kScaleOut = 2 };

std::string micros(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(ns) / 1000.0);
  return text;
}

std::string lane(int pid, int tid, const char* name) {
  return concat("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid, ",\"tid\":", tid,
                ",\"args\":{\"name\":\"", name, "\"}},\n");
}

}  // namespace

TraceWriter::TraceWriter(const std::string& dir, const std::string& fileTag, const Topology& topo,
                         const std::string& comm)
    : pid_(topo.rank()) {
  ::mkdir(dir.c_str(), 0777);  // one level, if missing; the open below says if it is not usable
  path_ = concat(dir, "/tiercc-trace-", fileTag, "-rank", topo.rank(), ".json");
  out_.open(path_, std::ios::trunc);
  if (!out_) fail(ErrorCode::SystemError, "TIERCC_TRACE: cannot write ", path_);
  buffer_ = concat("[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid_, ",\"args\":{\"name\":\"rank ",
                   topo.rank(), " (domain ", topo.domain(), ", local rank ", topo.localRank(), ")", "\"}},\n",
                   "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":", pid_, ",\"args\":{\"sort_index\":", pid_,
                   "}},\n", lane(pid_, kCalls, ("operations " + comm).c_str()), lane(pid_, kScaleUp, "scale-up"),
                   lane(pid_, kScaleOut, "scale-out"));
  steps_.spans.reserve(256);
}

TraceWriter::~TraceWriter() { flush(); }

void TraceWriter::flush() {
  out_ << buffer_;
  out_.flush();
  buffer_.clear();
}

void TraceWriter::call(const std::string& what, const CallArgs& args, const Plan* plan, std::int64_t beginNs,
                       std::int64_t endNs, bool ok) {
  std::uint64_t up = 0, out = 0;
  for (const StepSpan& s : steps_.spans) {
    up += s.scaleUpBytes;
    out += s.scaleOutBytes;
    if (!plan || s.step >= plan->steps.size()) continue;
    const Step& st = plan->steps[s.step];
    buffer_ += concat("{\"ph\":\"X\",\"name\":\"", toString(st.kind), s.wait ? " (wait)" : "", "\",\"cat\":\"step\",\"pid\":",
                      pid_, ",\"tid\":", st.tier == Tier::ScaleUp ? kScaleUp : kScaleOut, ",\"ts\":", micros(s.beginNs),
                      ",\"dur\":", micros(s.endNs - s.beginNs), ",\"args\":{\"call\":\"", what, "\",\"step\":", s.step,
                      ",\"fragment\":", s.fragment, ",\"tier\":\"", toString(st.tier), "\",\"scaleup_bytes\":",
                      s.scaleUpBytes, ",\"scaleout_bytes\":", s.scaleOutBytes, "}},\n");
  }
  buffer_ += concat("{\"ph\":\"X\",\"name\":\"", what, "\",\"cat\":\"", toString(args.coll), "\",\"pid\":", pid_,
                    ",\"tid\":", kCalls, ",\"ts\":", micros(beginNs), ",\"dur\":", micros(endNs - beginNs),
                    ",\"args\":{\"count\":", args.count, ",\"dtype\":\"", toString(args.dt), "\",\"algorithm\":\"",
                    plan ? toString(plan->algorithm) : "none", "\",\"path\":\"", plan ? toString(plan->path) : "none",
                    "\",\"fragments\":", plan ? plan->fragments : 0, ",\"slots\":", plan ? plan->slots : 0,
                    ",\"ok\":", ok ? "true" : "false", ",\"scaleup_bytes\":", up, ",\"scaleout_bytes\":", out, "}},\n");
  steps_.spans.clear();
  if (buffer_.size() >= kFlushBytes) flush();
}

}  // namespace tiercc
