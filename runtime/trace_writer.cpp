// Chrome trace events (see trace_writer.hpp): "X" (complete) events with ts and dur in
// microseconds of the steady clock, which every process on a host shares.
#include "runtime/trace_writer.hpp"

#include <sys/stat.h>

#include <cstdio>

#include "core/errors.hpp"

namespace tiercc {
namespace {

constexpr std::size_t kFlushSpans = 1 << 15;  // about 4 MB of text
enum Lane { kCalls = 0, kScaleUp = 1, kScaleOut = 2 };

// Appends printf-formatted text (the hot part of formatting: no stream per event).
template <class... Args>
void append(std::string& out, const char* format, Args... args) {
  char line[512];
  const int n = std::snprintf(line, sizeof(line), format, args...);
  if (n > 0) out.append(line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof(line) - 1));
}

double micros(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

TraceWriter::TraceWriter(const std::string& dir, const std::string& fileTag, const Topology& topo,
                         const std::string& comm)
    : pid_(topo.rank()), rail_(topo.localRank()) {
  ::mkdir(dir.c_str(), 0777);  // one level, if missing; the open below says if it is not usable
  path_ = concat(dir, "/tiercc-trace-", fileTag, "-rank", topo.rank(), ".json");
  out_.open(path_, std::ios::trunc);
  if (!out_) fail(ErrorCode::SystemError, "TIERCC_TRACE: cannot write ", path_);
  out_ << "[\n"
       << concat("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid_, ",\"args\":{\"name\":\"rank ", topo.rank(),
                 " (domain ", topo.domain(), ", local rank ", topo.localRank(), ")\"}},\n")
       << concat("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":", pid_, ",\"args\":{\"sort_index\":", pid_,
                 "}},\n");
  const std::pair<int, std::string> lanes[] = {
      {kCalls, "operations " + comm}, {kScaleUp, "scale-up"}, {kScaleOut, "scale-out"}};
  for (const auto& [tid, name] : lanes)
    out_ << concat("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid_, ",\"tid\":", tid, ",\"args\":{\"name\":\"",
                   name, "\"}},\n");
  out_.flush();
  steps_.spans.reserve(kFlushSpans + 1024);
  operations_.reserve(4096);
}

TraceWriter::~TraceWriter() { flush(); }

void TraceWriter::call(const char* name, std::uint64_t seq, const CallArgs& args, const Plan* plan,
                       std::int64_t beginNs, std::int64_t endNs, bool ok) {
  const std::size_t first = operations_.empty() ? 0 : operations_.back().endSpan;
  operations_.push_back(
      {name, seq, args.coll, args.peer, args.count, args.dt, plan, beginNs, endNs, ok, first, steps_.spans.size()});
  if (steps_.spans.size() >= kFlushSpans) flush();
}

void TraceWriter::format(const Operation& op) {
  // Send and receive are named by their peer, as in the errors: "send to rank 3 #2".
  char name[96];
  if (op.coll == Collective::Send || op.coll == Collective::Recv)
    std::snprintf(name, sizeof(name), "%s rank %d #%llu", op.coll == Collective::Send ? "send to" : "recv from",
                  op.peer, static_cast<unsigned long long>(op.seq));
  else
    std::snprintf(name, sizeof(name), "%s #%llu", op.name, static_cast<unsigned long long>(op.seq));
  std::uint64_t up = 0, out = 0;
  for (std::size_t i = op.firstSpan; i < op.endSpan; ++i) {
    const StepSpan& s = steps_.spans[i];
    up += s.scaleUpBytes;
    out += s.scaleOutBytes;
    if (!op.plan || s.step >= op.plan->steps.size()) continue;
    const Step& st = op.plan->steps[s.step];
    append(text_,
           "{\"ph\":\"X\",\"name\":\"%s%s\",\"cat\":\"step\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
           "\"args\":{\"call\":\"%s\",\"step\":%u,\"fragment\":%d,\"tier\":\"%s\",\"rail\":%d,"
           "\"scaleup_bytes\":%llu,\"scaleout_bytes\":%llu}},\n",
           toString(st.kind), s.wait ? " (wait)" : "", pid_, st.tier == Tier::ScaleUp ? kScaleUp : kScaleOut,
           micros(s.beginNs), micros(s.endNs - s.beginNs), name, s.step, s.fragment, toString(st.tier), rail_,
           static_cast<unsigned long long>(s.scaleUpBytes), static_cast<unsigned long long>(s.scaleOutBytes));
  }
  const Plan* p = op.plan;
  append(text_,
         "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{"
         "\"count\":%zu,\"dtype\":\"%s\",\"algorithm\":\"%s\",\"path\":\"%s\",\"fragments\":%u,\"slots\":%u,"
         "\"ok\":%s,\"scaleup_bytes\":%llu,\"scaleout_bytes\":%llu}},\n",
         name, toString(op.coll), pid_, kCalls, micros(op.beginNs), micros(op.endNs - op.beginNs), op.count,
         toString(op.dt), p ? toString(p->algorithm) : "none", p ? toString(p->path) : "none", p ? p->fragments : 0u,
         p ? p->slots : 0u, op.ok ? "true" : "false", static_cast<unsigned long long>(up),
         static_cast<unsigned long long>(out));
}

void TraceWriter::flush() {
  for (const Operation& op : operations_) format(op);
  out_ << text_;
  out_.flush();
  text_.clear();
  operations_.clear();
  steps_.spans.clear();
}

}  // namespace tiercc
