// Communicator lifecycle (joining is in join.cpp, wiring the two tiers at init in
// init_tiers.cpp): the failure detector, split, shrink, abort, statistics and teardown.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <thread>

#include "bootstrap/failure_detector.hpp"
#include "bootstrap/failure_verdict.hpp"
#include "bootstrap/store.hpp"
#include "bootstrap/store_allgather.hpp"
#include "bootstrap/survivor_agreement.hpp"
#include "core/cycle_clock.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/params.hpp"
#include "core/random_bytes.hpp"
#include "plan/selector.hpp"
#include "runtime/communicator_impl.hpp"
#include "runtime/env.hpp"
#include "runtime/metrics_server.hpp"
#include "runtime/signal_dump.hpp"
#include "runtime/tier_model.hpp"
#include "runtime/tier_probe.hpp"
#include "runtime/watched_peers.hpp"
#include "scaleup-emu/emulated/emulated_domain.hpp"
#include "scaleup-emu/shm/shm_domain.hpp"
#include "transport/factory.hpp"

namespace tiercc {
namespace {

std::string hashHex(const std::string& s) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016zx", std::hash<std::string>{}(s));
  return std::string(buf, 8);
}

}  // namespace

std::string Communicator::Impl::name() const { return setup_.jobId + "-" + hashHex(setup_.prefix); }

Communicator::Impl::Impl(CommSetup setup) : setup_(std::move(setup)) {
  TIERCC_REQUIRE_ARG(setup_.size >= 1, "world size must be at least 1, got ", setup_.size);
  TIERCC_REQUIRE_ARG(setup_.rank >= 0 && setup_.rank < setup_.size, "rank ", setup_.rank, " is not in [0, ",
                     setup_.size, ")");
  timeout_ = params::getDuration("TIERCC_TIMEOUT");
  oneShotLimitBytes_ =
      static_cast<std::size_t>(std::max<std::int64_t>(0, params::getInt("TIERCC_ALLREDUCE_ONESHOT_BYTES")));
  knomialRadix_ = static_cast<int>(params::getInt("TIERCC_KNOMIAL_RADIX"));
  TIERCC_REQUIRE_ARG(knomialRadix_ >= 2 && knomialRadix_ <= 16, "TIERCC_KNOMIAL_RADIX must be in [2, 16], got ",
                     knomialRadix_);
  const std::int64_t slots = params::getInt("TIERCC_PIPELINE_SLOTS");
  TIERCC_REQUIRE_ARG(slots >= 0 && slots <= kMaxSlots, "TIERCC_PIPELINE_SLOTS must be in [0, ", kMaxSlots,
                     "] (0: the cost model chooses), got ", slots);
  pipelineSlots_ = static_cast<std::uint32_t>(slots);
  window_ = windowSettingFromParams();
  algoOverrides_ = parseAlgoOverrides(params::getString("TIERCC_ALGO"));  // a bad value fails before any wait
  pathOverride_ = parsePathOverride(params::getString("TIERCC_PATH"));
  tierModel_ = tierModelFromParams();
  fault_ = FaultInjection::parse(params::getString("TIERCC_FAULT"));  // a bad value fails here, on every rank
  if (fault_ && fault_->rank != setup_.rank) fault_.reset();
  const std::int64_t recorded = params::getInt("TIERCC_FLIGHT_RECORDER");
  TIERCC_REQUIRE_ARG(recorded >= 0 && recorded <= 1 << 20, "TIERCC_FLIGHT_RECORDER must be in [0, 1048576], got ",
                     recorded);
  recorder_ = std::make_unique<FlightRecorder>(static_cast<std::size_t>(recorded));
  store_ = std::make_shared<PrefixStore>(setup_.baseStore, setup_.prefix);
  if (!setup_.forcedDomain) log::setRank(setup_.rank);
  initTiers();
  startFailureDetector();
  if (const std::string dir = params::getString("TIERCC_TRACE"); !dir.empty())
    trace_ = std::make_unique<TraceWriter>(dir, name(), topo_, setup_.prefix);
  // The registrations last, after everything that may throw: a constructor that throws runs no
  // destructor, and a registration left behind would call into a freed communicator.
  std::optional<std::uint16_t> metricsPort;
  if (!params::raw("TIERCC_METRICS_PORT").empty()) {
    const std::int64_t port = params::getInt("TIERCC_METRICS_PORT") + hostIndex_;
    TIERCC_REQUIRE_ARG(port > 0 && port < 65536, "TIERCC_METRICS_PORT plus the rank's index on its host (", hostIndex_,
                       ") must be a port in [1, 65535], got ", port);
    metricsPort = static_cast<std::uint16_t>(port);
  }
  const std::string metricsAddr = params::getString("TIERCC_METRICS_ADDR");
  if (metricsPort) metricsHandle_ = registerMetrics(metricsAddr, *metricsPort, [this] { return metricsSnapshot(); });
  if (recorder_->capacity()) dumpSignal_ = onDumpSignal([this] { dumpFlightRecorder("SIGUSR1"); });
  TIERCC_LOG(Info, Init) << "communicator ready: rank " << topo_.rank() << " of " << topo_.size() << ", "
                         << topo_.describe() << ", scale-up " << domain_->name() << ", scale-out "
                         << (transport_ ? transport_->name() : "none (one domain)");
}

// Heartbeats go over a connection of their own: a beat must not queue behind a blocking get.
void Communicator::Impl::startFailureDetector() {
  const auto timeout = params::getDuration("TIERCC_HEARTBEAT_TIMEOUT");
  if (setup_.size < 2 || timeout.count() == 0) return;
  const auto period = std::max(params::getDuration("TIERCC_HEARTBEAT_PERIOD"), std::chrono::milliseconds(10));
  heartbeatPeriod_ = std::min(period, std::chrono::milliseconds(2000));
  heartbeatTimeout_ = timeout;
  std::shared_ptr<Store> base = setup_.baseStore;
  if (!setup_.storeAddr.empty()) {
    std::string host;
    std::uint16_t port = 0;
    parseHostPort(setup_.storeAddr, host, port);
    base = connectTcpStore(host, port, Deadline::after(timeout_), FailureDetector::storeWait(period, timeout),
                           setup_.storeSecret);
  }
  quickStore_ = std::make_shared<PrefixStore>(base, setup_.prefix);
  detector_ = std::make_unique<FailureDetector>(
      quickStore_, setup_.rank, watchedPeers(topo_), period, timeout,
      [this](int r, const std::string& why) { peerFailed(r, why); },
      [this](const std::string& verdict) { verdictHeard(verdict); }, [this] { return recorder_->progress().encode(); },
      [this](const std::string& why) { storeLost(why); });
}

std::string Communicator::Impl::storeHostName() const {
  const std::string store = setup_.storeAddr.empty() ? "the bootstrap store" : "the bootstrap store at " + setup_.storeAddr;
  return storeHostRank_ >= 0 ? concat(topo_.nameRank(storeHostRank_), ", which hosts ", store) : store;
}

// No verdict can be published: the store is what carries it. Every rank's detector sees the
// store go within the same bound, and each says so.
void Communicator::Impl::storeLost(const std::string& why) {
  if (broken_.load(std::memory_order_acquire)) return;
  stopWith(Error(ErrorCode::PeerFailure, concat(storeHostName(), ", stopped answering (", why,
                                                "); it may have died, be stopped or hung, or its host be gone")));
}

// Another rank's verdict, heard by the failure detector: this rank may have nothing in flight,
// or be waiting on a rank that is itself waiting on the failed one.
void Communicator::Impl::verdictHeard(const std::string& verdict) {
  // This rank's own verdict (it failed or aborted first) needs no hearing.
  if (broken_.load(std::memory_order_acquire) || verdictOwn_.load()) return;
  if (callsDiffer(verdict))
    stopWith(Error(ErrorCode::InvalidArgument, concat("another rank's call differs [root cause, ", verdict, "]")));
  else
    stopWith(Error(ErrorCode::PeerFailure, concat("another rank failed [root cause, ", verdict, "]")));
}

void Communicator::Impl::peerFailed(int rank, const std::string& why) {
  if (broken_.load(std::memory_order_acquire)) return;
  stopWith(withRootCause(Error(ErrorCode::PeerFailure, concat(topo_.nameRank(rank), " ", why))));
}

// Wakes every wait of this rank; execute() then reports brokenBy_, not the wake-up.
void Communicator::Impl::stopWith(const Error& e) {
  {
    std::lock_guard<BiasedMutex> lock(statsMutex_);
    if (brokenBy_) return;
    brokenBy_ = std::make_exception_ptr(e);
    broken_.store(true, std::memory_order_release);
  }
  TIERCC_LOG(Warn, Init) << e.what();
  domain_->abort();
  if (transport_) transport_->abort();
  dumpFlightRecorder(e.what());
  countStopped();
}

// The key counts the ranks that stopped on the failure; only the store's host reads it.
constexpr const char* kStoppedKey = "failure/stopped";

void Communicator::Impl::countStopped() {
  if (setup_.size < 2 || stopCounted_.exchange(true)) return;
  try {
    (quickStore_ ? *quickStore_ : *store_).add(kStoppedKey, 1);
  } catch (const std::exception& e) {
    TIERCC_LOG(Info, Init) << "could not tell the store that this rank stopped (" << e.what() << ")";
  }
}

// A rank that raises on a failure usually destroys its communicator and exits at once. On the
// store's host that would take the store, and with it the verdict, from the survivors still
// reading it: they would name the store's host instead of the failed rank. So the host waits
// until every rank has stopped, at most a heartbeat timeout and a period, the bound in which
// every survivor's detector hears the verdict. Every rank, not all but one: a failed rank that
// lives on (a stall, an error) counts itself too, and one survivor would be left reading.
void Communicator::Impl::lingerForSurvivors() {
  if (!setup_.hostedServer || setup_.size < 2 || heartbeatTimeout_.count() == 0) return;
  const Deadline deadline = Deadline::after(heartbeatTimeout_ + heartbeatPeriod_);
  Store& store = quickStore_ ? *quickStore_ : *store_;
  try {
    while (store.add(kStoppedKey, 0) < setup_.size) {
      if (deadline.expired()) {
        TIERCC_LOG(Info, Init) << "communicator teardown: not every survivor stopped within "
                               << (heartbeatTimeout_ + heartbeatPeriod_).count() << " ms; closing the store anyway";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (const std::exception& e) {
    TIERCC_LOG(Info, Init) << "communicator teardown: " << e.what();
  }
}

void Communicator::Impl::dumpFlightRecorder(const std::string& reason) const {
  if (!recorder_->capacity()) return;
  const std::string dir = params::getString("TIERCC_FLIGHT_RECORDER_DIR");
  const std::string path = concat(dir, "/tiercc-flight-", name(), "-rank", topo_.rank(), ".json");
  ::mkdir(dir.c_str(), 0777);  // one level, if missing; a failure shows when the file does not open
  std::ofstream out(path, std::ios::trunc);
  out << recorder_->json(topo_, setup_.prefix, reason, queue_.queued());
  out.close();
  if (out)
    TIERCC_LOG(Warn, Init) << "flight recorder: " << path;
  else
    TIERCC_LOG(Warn, Init) << "flight recorder: could not write " << path;
}

Communicator::Impl::~Impl() {
  if (dumpSignal_) offDumpSignal(dumpSignal_);  // no dump or scrape may start once teardown has
  if (metricsHandle_) unregisterMetrics(metricsHandle_);
  try {
    queue_.shutdown();  // finish queued work while the tiers still exist
    detector_.reset();  // say goodbye before leaving
    writeStatsFile();
    exitRendezvous();
  } catch (const std::exception& e) {
    TIERCC_LOG(Warn, Init) << "communicator teardown: " << e.what();
  }
}

// Every rank waits, bounded, until every rank is done with this communicator before its
// transport closes its endpoints: a peer may still be completing a send to this rank, and UCX
// fails a send whose peer closed the connection even when the peer received it. The rank that
// hosts the store keeps it up until then, too.
void Communicator::Impl::exitRendezvous() {
  if (aborted_.load() || brokenBy_) {  // peers that failed will not say goodbye
    lingerForSurvivors();
    return;
  }
  if (store_->add("exit", 1) == setup_.size) store_->setString("exit/all", "1");
  const auto wait = std::min(timeout_, std::chrono::milliseconds(10000));
  try {
    store_->wait({"exit/all"}, Deadline::after(wait));
  } catch (const Error& e) {
    TIERCC_LOG(Info, Init) << "communicator teardown: not every rank said goodbye within "
                           << wait.count() << " ms; closing anyway (" << e.what() << ")";
  }
}

MetricSnapshot Communicator::Impl::metricsSnapshot() const {
  MetricSnapshot m;
  m.rank = topo_.rank();
  m.size = topo_.size();
  m.domain = topo_.domain();
  m.localRank = topo_.localRank();
  m.communicator = setup_.prefix;
  {
    std::lock_guard<BiasedMutex> lock(statsMutex_);
    m.counts = metrics_;
  }
  const Progress p = recorder_->progress();
  m.entered = p.entered;
  m.completed = p.completed;
  if (detector_) m.heartbeatAges = detector_->heartbeatAges();
  return m;
}

TierStats Communicator::Impl::stats() const {
  const double secondsPerTick = cycles::secondsPerTick();
  std::lock_guard<BiasedMutex> lock(statsMutex_);
  TierStats s;
  s.collectives = totals_.collectives;
  s.scaleUpBytes = totals_.scaleUpBytes;
  s.scaleOutBytes = totals_.scaleOutBytes;
  s.scaleOutBoundBytes = totals_.scaleOutBoundBytes;
  if (totals_.collectives == 0) return s;
  s.algorithm = toString(totals_.algorithm);
  s.scaleUpPath = toString(totals_.path);
  for (const Totals::Step& st : totals_.lastSteps)
    s.lastSteps.push_back({toString(st.kind), toString(st.tier), st.counts.scaleUpBytes, st.counts.scaleOutBytes,
                           double(st.counts.ticks) * secondsPerTick});
  return s;
}

void Communicator::Impl::writeStatsFile() const {
  std::string path = params::getString("TIERCC_STATS");
  if (path.empty()) return;
  TierStats s = stats();
  std::ofstream out(path, std::ios::app);
  out << "{\"rank\":" << topo_.rank() << ",\"size\":" << topo_.size() << ",\"domain\":" << topo_.domain()
      << ",\"local_rank\":" << topo_.localRank() << ",\"rail\":" << topo_.localRank()
      << ",\"collectives\":" << s.collectives << ",\"scaleup_bytes\":" << s.scaleUpBytes
      << ",\"scaleout_bytes\":" << s.scaleOutBytes << ",\"scaleout_bound_bytes\":" << s.scaleOutBoundBytes
      << ",\"last_algorithm\":\"" << s.algorithm << "\"}\n";
}

// How long abort() waits for the running operation to notice it.
constexpr std::chrono::milliseconds kAbortWait{10000};

// The peers hear of it through the failure verdict (their detectors read it at each beat), so a
// rank that aborts while they wait on it, or before they call, stops them within a period.
void Communicator::Impl::abort() {
  if (aborted_.exchange(true)) return;
  TIERCC_LOG(Warn, Init) << "communicator aborted";
  {
    std::lock_guard<BiasedMutex> lock(statsMutex_);
    metrics_.aborts += 1;
  }
  // The verdict first: stopping the tiers makes the running operation fail (with Aborted, which
  // publishes nothing), and a verdict checked for after that would look already out.
  if (!broken_.load(std::memory_order_acquire) && setup_.size > 1) {  // else a verdict is out already
    try {
      verdictOwn_ = true;
      publishFailureVerdict(quickStore_ ? *quickStore_ : *store_,
                            concat(topo_.nameRank(topo_.rank()), " aborted its communicator"));
    } catch (const std::exception& e) {
      TIERCC_LOG(Warn, Init) << "abort: could not tell the peers through the store (" << e.what() << ")";
    }
  }
  countStopped();
  if (domain_) domain_->abort();
  if (transport_) transport_->abort();
  // The operation running (a Work that a wait(timeout) gave up on, or a blocking call on another
  // thread) ends at its next wait; once abort() returns, it touches the caller's buffers no more.
  if (!queue_.waitIdle(kAbortWait)) {
    TIERCC_LOG(Warn, Init) << "abort: an operation still runs " << kAbortWait.count() << " ms after the abort";
  }
}

std::unique_ptr<Communicator::Impl> Communicator::Impl::split(int color, int key) {
  const std::string tag = "split" + std::to_string(splitCount_++) + "/";
  Deadline deadline = Deadline::after(timeout_);
  const std::vector<std::string> colorsAndKeys = allgatherThroughStore(
      *store_, topo_.rank(), topo_.size(), tag, std::to_string(color) + " " + std::to_string(key), deadline);
  struct Member {
    int key, rank;
  };
  std::vector<Member> group;
  for (int r = 0; r < topo_.size(); ++r) {
    int c = 0, k = 0;
    std::sscanf(colorsAndKeys[r].c_str(), "%d %d", &c, &k);
    if (c == color && color >= 0) group.push_back({k, r});
  }
  if (color < 0) return nullptr;
  std::stable_sort(group.begin(), group.end(),
                   [](const Member& a, const Member& b) { return a.key != b.key ? a.key < b.key : a.rank < b.rank; });
  CommSetup child;
  child.baseStore = setup_.baseStore;
  child.hostedServer = setup_.hostedServer;
  child.storeAddr = setup_.storeAddr;
  child.storeSecret = setup_.storeSecret;
  child.prefix = setup_.prefix + tag + "c" + std::to_string(color) + "/";
  child.jobId = setup_.jobId;
  child.size = static_cast<int>(group.size());
  for (int i = 0; i < child.size; ++i)
    if (group[i].rank == topo_.rank()) child.rank = i;
  child.forcedDomain = topo_.domain();
  return std::make_unique<Impl>(std::move(child));
}

// The survivors agree on who goes on (bootstrap/survivor_agreement.hpp), in a namespace of this
// shrink's own, then form the child as a split would: the parent's domains, ranks in old order.
std::unique_ptr<Communicator::Impl> Communicator::Impl::shrink(Communicator::Shrink which) {
  const std::string tag = "shrink" + std::to_string(shrinkCount_++) + "/";
  SurvivorWatch watch;
  // With the detector off no rank beats: one that has not joined within the timeout is out.
  watch.beatTimeout = detector_ ? params::getDuration("TIERCC_HEARTBEAT_TIMEOUT") : timeout_;
  watch.poll = std::clamp(heartbeatPeriod_ / 2, std::chrono::milliseconds(10), std::chrono::milliseconds(100));
  const Deadline deadline = Deadline::after(watch.beatTimeout + timeout_);
  std::vector<int> members = agreeOnSurvivors(*store_, tag, topo_.rank(), topo_.size(), watch, deadline);
  std::vector<bool> kept(static_cast<std::size_t>(topo_.size()), false);
  for (int r : members) kept[static_cast<std::size_t>(r)] = true;
  if (!kept[static_cast<std::size_t>(topo_.rank())])
    fail(ErrorCode::PeerFailure, "shrink: the other survivors judged this rank (", topo_.nameRank(topo_.rank()),
         ") failed: its heartbeat stood still for ", watch.beatTimeout.count(), " ms");
  std::string out;
  for (int r = 0; r < topo_.size(); ++r)
    if (!kept[static_cast<std::size_t>(r)]) out += (out.empty() ? "" : ", ") + topo_.nameRank(r);
  if (which == Communicator::Shrink::FailedDomains) {
    std::vector<bool> failedDomain(static_cast<std::size_t>(topo_.numDomains()), false);
    for (int r = 0; r < topo_.size(); ++r)
      if (!kept[static_cast<std::size_t>(r)]) failedDomain[static_cast<std::size_t>(topo_.domainOf(r))] = true;
    std::erase_if(members, [&](int r) { return failedDomain[static_cast<std::size_t>(topo_.domainOf(r))]; });
  }
  TIERCC_LOG(Warn, Init) << "shrink: " << members.size() << " of " << topo_.size() << " ranks go on"
                         << (out.empty() ? "" : " without " + out)
                         << (which == Communicator::Shrink::FailedDomains ? " (and their domains)" : "");
  const auto me = std::find(members.begin(), members.end(), topo_.rank());
  if (me == members.end()) return nullptr;  // its domain lost a rank
  CommSetup child;
  child.baseStore = setup_.baseStore;
  child.hostedServer = setup_.hostedServer;
  child.storeAddr = setup_.storeAddr;
  child.storeSecret = setup_.storeSecret;
  child.prefix = setup_.prefix + tag + "c/";
  child.jobId = setup_.jobId;
  child.size = static_cast<int>(members.size());
  child.rank = static_cast<int>(me - members.begin());
  child.forcedDomain = topo_.domain();
  return std::make_unique<Impl>(std::move(child));
}

}  // namespace tiercc

// ---- public Communicator: accessors (joining is in join.cpp) ----------------------------

namespace tiercc {

Communicator::~Communicator() = default;
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;

namespace {
const Topology& topo(const std::unique_ptr<Communicator::Impl>& impl) {
  if (!impl) fail(ErrorCode::InvalidArgument, "empty communicator (moved from, split with a negative color, or left out by a shrink)");
  return impl->topology();
}
}  // namespace

int Communicator::rank() const { return topo(impl_).rank(); }
int Communicator::size() const { return topo(impl_).size(); }
int Communicator::domain() const { return topo(impl_).domain(); }
int Communicator::localRank() const { return topo(impl_).localRank(); }
int Communicator::domainSize() const { return topo(impl_).domainSize(); }
int Communicator::numDomains() const { return topo(impl_).numDomains(); }
bool Communicator::valid() const { return impl_ != nullptr; }
std::string Communicator::transportName() const {
  topo(impl_);
  return impl_->transportName();
}
std::string Communicator::scaleOutEndpoint() const {
  topo(impl_);
  return impl_->scaleOutEndpoint();
}
std::string Communicator::scaleUpName() const {
  topo(impl_);
  return impl_->scaleUpName();
}

Communicator Communicator::split(int color, int key) {
  topo(impl_);
  if (impl_->aborted()) fail(ErrorCode::Aborted, "split: the communicator was aborted");
  return Communicator(impl_->split(color, key));
}

// A failed or aborted communicator may shrink: that is what shrink is for.
Communicator Communicator::shrink(Shrink which) {
  topo(impl_);
  TIERCC_REQUIRE_ARG(which == Shrink::FailedRanks || which == Shrink::FailedDomains, "shrink: unknown option ",
                     static_cast<int>(which));
  return Communicator(impl_->shrink(which));
}

void Communicator::abort() {
  if (impl_) impl_->abort();
}

TierStats Communicator::stats() const {
  topo(impl_);
  return impl_->stats();
}

std::string Communicator::tierModel() const {
  topo(impl_);
  return impl_->tierModelDescription();
}

}  // namespace tiercc
