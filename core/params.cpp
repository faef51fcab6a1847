// The TIERCC_* parameter registry. Every parameter tiercc reads is declared in kParams below,
// once, with its type, default and description; `tiercc-info --params` prints this table.
#include "core/params.hpp"

#include <cctype>
#include <cstdlib>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace tiercc::params {
namespace {

const std::vector<Info> kParams = {
    {"TIERCC_STORE", "string", "", "bootstrap store address host:port (set by tiercc-run)"},
    {"TIERCC_STORE_SECRET", "secret", "",
     "the job's store secret: every connection to the store presents it, and a store hosted by rank 0 requires it "
     "(tiercc-run generates one; every process of the job needs the same); unset: the store admits anyone who "
     "reaches it"},
    {"TIERCC_BOOTSTRAP_ADDR", "string", "",
     "address the store that tiercc_get_unique_id starts listens on and writes into the id (default: the first "
     "IPv4 address of an interface that is up and not loopback, else 127.0.0.1)"},
    {"TIERCC_RANK", "int", "", "this process's rank (also OMPI_COMM_WORLD_RANK, RANK)"},
    {"TIERCC_WORLD_SIZE", "int", "", "number of ranks (also OMPI_COMM_WORLD_SIZE, WORLD_SIZE)"},
    {"TIERCC_DOMAIN_SIZE", "int", "", "group consecutive ranks into scale-up domains of this size"},
    {"TIERCC_DOMAIN_ID", "int", "", "this rank's scale-up domain (any integer; overrides host detection)"},
    {"TIERCC_TIMEOUT", "duration", "300s", "deadline of every blocking wait (e.g. 300s, 1500ms, 5m)"},
    {"TIERCC_HEARTBEAT_PERIOD", "duration", "500ms", "how often each rank beats in the store (failure detector)"},
    {"TIERCC_HEARTBEAT_TIMEOUT", "duration", "3s",
     "a rank whose heartbeat stalls this long is declared failed, naming it; 0 disables"},
    {"TIERCC_FAULT", "string", "",
     "tests: inject a fault, ACTION:rank=R[:call=N][:step=S][:ms=M] with ACTION kill, stop, stall or error "
     "(core/fault_injection.hpp)"},
    {"TIERCC_TRANSPORT", "string", "",
     "scale-out transport: ibverbs, ucx or tcp (default: ibverbs where an RDMA device is, else ucx where UCX has a "
     "network transport besides tcp, else tcp; tiercc-info says why)"},
    {"TIERCC_SOCKET_IFADDR", "string", "",
     "address the TCP scale-out transport listens on, or one per local rank (a,b,...); default: by "
     "TIERCC_SOCKET_IFNAME, else the first routable address when the job spans hosts, else 127.0.0.1"},
    {"TIERCC_SOCKET_IFNAME", "string", "",
     "TCP: the interface of each local rank, one NIC per rail (rail0,rail1,... or a prefix such as rail*: "
     "local rank r takes entry r of the list, modulo its length)"},
    {"TIERCC_IB_DEVICE", "string", "",
     "ibverbs: RDMA device to use (e.g. mlx5_0, rxe0), or one per local rank (mlx5_0,mlx5_1,...: local rank r "
     "takes entry r, modulo the length); default: the first with a usable port"},
    {"TIERCC_IB_PORT", "int", "", "ibverbs: port number on the device (default: the first ACTIVE port)"},
    {"TIERCC_IB_GID_INDEX", "int", "", "ibverbs: GID table index (default: the RoCE v2 GID of an IPv4 address)"},
    {"TIERCC_IB_TIMEOUT", "int", "14",
     "ibverbs: QP ack timeout exponent (4.096 us * 2^n per try; bounds dead-peer detection); unset on SoftRoCE: 16 "
     "(its software acks stall beyond 67 ms on a loaded host)"},
    {"TIERCC_IB_RETRY_CNT", "int", "7", "ibverbs: QP transport retries before a send fails (0-7)"},
    {"TIERCC_IB_EAGER_LIMIT", "int", "8192",
     "ibverbs: largest message sent eagerly through bounce buffers; larger ones use RDMA write rendezvous"},
    {"TIERCC_IB_CREDITS", "int", "64", "ibverbs: receive buffers posted per peer (flow-control credits)"},
    {"TIERCC_IB_MR_CACHE", "int", "64", "ibverbs: memory registrations kept in the LRU cache of registerMemory"},
    {"TIERCC_ALLREDUCE_ONESHOT_BYTES", "int", "16384",
     "allreduce above this many bytes never runs one-shot; up to it, the cost model decides"},
    {"TIERCC_PIPELINE_SLOTS", "int", "0",
     "fragments a staged plan keeps in flight, 1 to 8 (each in its share of the window, so more slots cut "
     "smaller fragments); 0: the cost model chooses per call (inside one domain 1, deeper only for a staged "
     "broadcast)"},
    {"TIERCC_ALGO", "string", "",
     "force algorithms, e.g. allreduce:ring,alltoall:bruck (tiercc-info --algorithms lists them); unset: the cost "
     "model chooses"},
    {"TIERCC_PATH", "string", "auto",
     "how a domain's ranks reach each other's data: auto (the cost model decides), staged (through the windows), "
     "zero_copy (symmetric buffers, mapped), cma (cross-memory attach); a forced one is taken wherever the plan and "
     "the buffers allow it"},
    {"TIERCC_KNOMIAL_RADIX", "int", "2", "radix of the k-nomial trees (broadcast, reduce), 2..16"},
    {"TIERCC_TUNE_SCALEUP_BW", "bandwidth", "12GB/s",
     "cost model: bandwidth of one rank through its domain's windows (a paced TIERCC_EMU_SCALEUP_BW wins)"},
    {"TIERCC_TUNE_SCALEUP_LATENCY", "latency", "0.5us", "cost model: latency of one synchronisation inside a domain"},
    {"TIERCC_TUNE_SCALEOUT_BW", "bandwidth", "1.25GB/s",
     "cost model: bandwidth of one rank's transport link (a paced TIERCC_EMU_SCALEOUT_BW wins)"},
    {"TIERCC_TUNE_SCALEOUT_LATENCY", "latency", "30us", "cost model: latency of one transport message"},
    {"TIERCC_TUNE_LOCAL_BW", "bandwidth", "16GB/s",
     "cost model: bandwidth of a rank's copies within its own memory (staging into its window): what a direct path "
     "saves"},
    {"TIERCC_TUNE_CACHE", "string", "auto",
     "cost model: a core's cache in bytes, for a domain in one host's memory: a fragment's plain reads of peers' "
     "memory (windows, mapped buffers) that fit it run at TIERCC_TUNE_LOCAL_BW; auto: this CPU's L2 (the smallest "
     "over the ranks), 0: none"},
    {"TIERCC_TUNE_CMA_BW", "bandwidth", "6.5GB/s",
     "cost model: bandwidth of a read of a domain peer's buffer through the kernel (cross-memory attach)"},
    {"TIERCC_TUNE_CMA_LATENCY", "latency", "3us",
     "cost model: cost of one such read (a system call that pins the pages)"},
    {"TIERCC_TUNE_PROBE", "bool", "off",
     "on: measure both tiers at init (a few ms) and price plans with the medians over all ranks instead of the "
     "TIERCC_TUNE_* figures (the scale-up latency stays configured)"},
    {"TIERCC_REDUCE_ISA", "string", "auto",
     "reduction kernels: auto (the best this CPU runs), generic, avx2 or avx512"},
    {"TIERCC_SHM_CHUNK", "string", "auto",
     "bytes per rank of the scale-up staging window (a multiple of 64, at least 4096), or auto: the cost model's, "
     "the smallest from 4 MiB up to TIERCC_SHM_CHUNK_MAX at which a long pipeline runs within 5% of the largest's "
     "rate (plan/window_size.hpp)"},
    {"TIERCC_SHM_CHUNK_MAX", "int", "67108864", "the largest staging window TIERCC_SHM_CHUNK=auto takes, in bytes"},
    {"TIERCC_SHM_COPY", "string", "auto",
     "cross-memory attach for ordinary buffers on shm: auto (set up where the kernel permits it; the cost model "
     "decides when to use it), cma (require it: an error where the kernel refuses), staged (never)"},
    {"TIERCC_SHM_SIGNAL", "string", "auto",
     "how a shm rank's signal is ordered against a peer about to sleep on it: auto (a plain store; the sleeper "
     "fences the signalling processes with membarrier(2), where the kernel offers it), fenced (every signal is a "
     "full fence)"},
    {"TIERCC_SCALEUP", "string", "auto",
     "scale-up backend: auto (shm when a domain's members share a host, else emulated), shm, or emulated (memory "
     "semantics over TIERCC_TRANSPORT)"},
    {"TIERCC_EMU_SCALEUP_BW", "bandwidth", "",
     "link model: pace each rank's scale-up traffic to this bandwidth, with its unit (e.g. 9GB/s; 72Gbit/s is the "
     "same); unset: not paced"},
    {"TIERCC_EMU_SCALEUP_LATENCY", "latency", "",
     "link model: latency of each scale-up step (e.g. 2us, 0); unset: none"},
    {"TIERCC_EMU_SCALEOUT_BW", "bandwidth", "",
     "link model: pace each rank's scale-out sends to this bandwidth, with its unit (e.g. 1GB/s = 8Gbit/s); unset: not "
     "paced"},
    {"TIERCC_EMU_SCALEOUT_LATENCY", "latency", "",
     "link model: latency of each scale-out step (e.g. 5us, 0); unset: none"},
    {"TIERCC_DEBUG", "string", "WARN", "log level: NONE, WARN, INFO, TRACE"},
    {"TIERCC_DEBUG_SUBSYS", "string", "ALL", "log subsystems: INIT,SHM,NET,COLL,PLAN,STORE,TUNE (^X excludes)"},
    {"TIERCC_STATS", "string", "", "file to append per-communicator tier statistics to (JSON lines) at destroy"},
    {"TIERCC_FLIGHT_RECORDER", "int", "64",
     "operations each communicator's flight recorder keeps (dumped as JSON on a timeout, a failure and SIGUSR1); 0: "
     "none"},
    {"TIERCC_FLIGHT_RECORDER_DIR", "string", "/tmp",
     "folder of the flight recorder's dumps: tiercc-flight-<job>-<communicator>-rank<r>.json"},
    {"TIERCC_METRICS_PORT", "int", "",
     "serve Prometheus metrics on /metrics at this port plus the rank's index among the ranks of its host "
     "(tiercc-run --metrics-port); unset: "
     "none"},
    {"TIERCC_METRICS_ADDR", "string", "127.0.0.1", "address the metrics endpoint listens on"},
    {"TIERCC_TRACE", "string", "",
     "folder to write a Chrome trace-event timeline per rank into (a span per collective and per plan step); "
     "tiercc-run merges them"},
};

const Info& find(const std::string& name) {
  for (const Info& p : kParams)
    if (name == p.name) return p;
  fail(ErrorCode::Internal, "parameter ", name, " is not registered in core/params.cpp");
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

const std::vector<Info>& all() { return kParams; }

std::string raw(const std::string& name) {
  const Info& p = find(name);
  const char* env = std::getenv(name.c_str());
  return env ? trim(env) : p.defaultValue;
}

std::string source(const std::string& name) {
  find(name);
  return std::getenv(name.c_str()) ? "environment" : "default";
}

std::int64_t getInt(const std::string& name) {
  std::string text = raw(name);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    fail(ErrorCode::InvalidArgument, name, "='", text, "' is not an integer");
  return v;
}

std::string getString(const std::string& name) { return raw(name); }

bool getBool(const std::string& name) {
  std::string t = raw(name);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off" || t.empty()) return false;
  fail(ErrorCode::InvalidArgument, name, "='", t, "' is not a boolean (use 1/0, true/false)");
}

std::chrono::milliseconds parseDuration(const std::string& text, const std::string& what) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string number = text.substr(0, i), unit = trim(text.substr(i));
  char* end = nullptr;
  double v = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  double scale = unit == "ms"                    ? 1
                 : (unit.empty() || unit == "s") ? 1000
                 : unit == "m"                   ? 60000
                 : unit == "h"                   ? 3600000
                                                 : -1;
  if (v < 0 || (end && *end != '\0') || scale < 0 || v * scale > 1e12)
    fail(ErrorCode::InvalidArgument, what, "='", text, "' is not a duration (examples: 300s, 1500ms, 5m)");
  return std::chrono::milliseconds(static_cast<std::int64_t>(v * scale));
}

std::chrono::milliseconds getDuration(const std::string& name) { return parseDuration(raw(name), name); }

std::optional<double> getBandwidth(const std::string& name) {
  std::string text = raw(name);
  if (text.empty()) return std::nullopt;
  return units::parseBandwidth(text, name);
}

std::optional<double> getLatency(const std::string& name) {
  std::string text = raw(name);
  if (text.empty()) return std::nullopt;
  return units::parseLatency(text, name);
}

}  // namespace tiercc::params
