// Command-line parsing for tiercc-perf (see options.hpp).
#include "bench/perf/options.hpp"

#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace tiercc::perf {
namespace {

const std::pair<const char*, Coll> kColls[] = {{"allreduce", Coll::AllReduce}, {"reduce_scatter", Coll::ReduceScatter},
                                               {"allgather", Coll::AllGather}, {"broadcast", Coll::Broadcast},
                                               {"reduce", Coll::Reduce},       {"alltoall", Coll::AllToAll},
                                               {"sendrecv", Coll::SendRecv}};

DataType parseType(const std::string& t) {
  for (int i = 0; i < kNumDataTypes; ++i)
    if (t == toString(static_cast<DataType>(i))) return static_cast<DataType>(i);
  if (t == "float") return DataType::F32;
  if (t == "double") return DataType::F64;
  if (t == "half") return DataType::F16;
  if (t == "int") return DataType::I32;
  fail(ErrorCode::InvalidArgument, "-d ", t, ": unknown datatype (f32 f64 f16 bf16 i8 u8 i32 u32 i64 u64)");
}

ReduceOp parseOp(const std::string& o) {
  for (int i = 0; i < kNumReduceOps; ++i)
    if (o == toString(static_cast<ReduceOp>(i))) return static_cast<ReduceOp>(i);
  fail(ErrorCode::InvalidArgument, "-o ", o, ": unknown op (sum prod min max avg)");
}

}  // namespace

int parseInt(const std::string& text, const std::string& what, int min) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v < min || v > 1000000000)
    fail(ErrorCode::InvalidArgument, what, " ", text, ": expected an integer >= ", min);
  return static_cast<int>(v);
}

const char* collName(Coll c) {
  for (auto& [name, coll] : kColls)
    if (coll == c) return name;
  return "?";
}

std::size_t parseSize(const std::string& text, const std::string& what) { return units::parseMessageSize(text, what); }

const char* usage() {
  return "usage: tiercc-perf [--coll allreduce|reduce_scatter|allgather|broadcast|reduce|alltoall|sendrecv]\n"
         "                   [-b minbytes] [-e maxbytes] [-f stepfactor] [-d type] [-o op] [-r root]\n"
         "                   [-n iters] [-w warmup] [-c 0|1] [--algo auto|NAME] [--json file]\n"
         "                   [--symmetric]  (buffers from allocShared: zero copy inside a domain)\n"
         "Run under tiercc-run (e.g. tiercc-run -n 8 --domain-size 4 tiercc-perf -b 8 -e 64M).\n"
         "Sizes follow nccl-tests: the buffer size in bytes (K, M, G = powers of 1024).\n";
}

Options parseOptions(int argc, char** argv, bool& help) {
  Options o;
  help = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      help = true;
      return o;
    }
    if (a == "--symmetric") {
      o.symmetric = true;
      continue;
    }
    if (i + 1 >= argc) fail(ErrorCode::InvalidArgument, a, ": missing value (or unknown option)");
    std::string v = argv[++i];
    if (a == "--coll" || a == "-C") {
      bool found = false;
      for (auto& [name, coll] : kColls) found = found || (v == name && (o.coll = coll, true));
      if (!found) fail(ErrorCode::InvalidArgument, "--coll ", v, ": unknown collective");
    } else if (a == "-b" || a == "--minbytes")
      o.minBytes = parseSize(v, a);
    else if (a == "-e" || a == "--maxbytes")
      o.maxBytes = parseSize(v, a);
    else if (a == "-f" || a == "--stepfactor") {
      o.stepFactor = std::strtod(v.c_str(), nullptr);
      if (!(o.stepFactor > 1)) fail(ErrorCode::InvalidArgument, "-f ", v, ": the step factor must be > 1");
    } else if (a == "-d" || a == "--datatype")
      o.dt = parseType(v);
    else if (a == "-o" || a == "--op")
      o.op = parseOp(v);
    else if (a == "-r" || a == "--root")
      o.root = parseInt(v, a, 0);
    else if (a == "-n" || a == "--iters")
      o.iters = parseInt(v, a, 1);
    else if (a == "-w" || a == "--warmup_iters")
      o.warmup = parseInt(v, a, 0);
    else if (a == "-c" || a == "--check")
      o.check = parseInt(v, a, 0) != 0;
    else if (a == "--algo") {
      // The communicator checks the name (TIERCC_ALGO) and lists the valid ones if it is wrong.
      o.algo = v;
    } else if (a == "--json")
      o.json = v;
    else
      fail(ErrorCode::InvalidArgument, "unknown option ", a);
  }
  if (o.minBytes > o.maxBytes) fail(ErrorCode::InvalidArgument, "-b is larger than -e");
  return o;
}

}  // namespace tiercc::perf
