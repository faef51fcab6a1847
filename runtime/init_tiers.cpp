// Wiring the two tiers at init: every rank publishes who and where it is (RankInfo) and the
// settings every rank must share, reads everyone's, and from them builds the topology, agrees on
// the cache the cost model prices with, picks and opens the domain's scale-up backend with its
// staging window, connects the transport's rail peers, probes the tiers if asked, and makes the
// selector.
#include <unistd.h>

#include <algorithm>

#include "bootstrap/store.hpp"
#include "bootstrap/store_allgather.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/params.hpp"
#include "core/random_bytes.hpp"
#include "plan/selector.hpp"
#include "runtime/communicator_impl.hpp"
#include "runtime/rank_info.hpp"
#include "runtime/tier_model.hpp"
#include "runtime/tier_probe.hpp"
#include "scaleup-emu/emulated/emulated_domain.hpp"
#include "scaleup-emu/shm/shm_domain.hpp"
#include "transport/factory.hpp"

namespace tiercc {
namespace {

int envInt(const char* name, int fallback) {
  std::string text = params::raw(name);
  return text.empty() ? fallback : static_cast<int>(params::getInt(name));
}

}  // namespace

void Communicator::Impl::initTiers() {
  // The link models first: a malformed value fails here, before any rank waits on this one.
  scaleUpLink_ = std::make_unique<LinkModel>(scaleUpPacingFromParams());
  scaleOutLink_ = std::make_unique<LinkModel>(scaleOutPacingFromParams());
  TIERCC_LOG(Info, Init) << "link model: scale-up " << scaleUpLink_->spec().describe() << "; scale-out "
                         << scaleOutLink_->spec().describe();
  Deadline deadline = Deadline::after(timeout_);
  const int rank = setup_.rank, size = setup_.size;
  if (setup_.jobId.empty()) {
    if (rank == 0) {
      unsigned char id[6];
      randomBytes(id, sizeof id, "the job id");
      store_->setString("jobid", toHex(id, sizeof id));
    }
    setup_.jobId = store_->getString("jobid", deadline);
  }

  // Publish who we are, then read everyone.
  RankInfo mine;
  mine.hostId = localHostId();
  mine.pid = static_cast<int>(getpid());
  mine.domainId = setup_.forcedDomain ? *setup_.forcedDomain : envInt("TIERCC_DOMAIN_ID", -1);
  mine.domainSize = setup_.forcedDomain ? 0 : envInt("TIERCC_DOMAIN_SIZE", 0);
  TIERCC_REQUIRE_ARG(mine.domainSize >= 0, "TIERCC_DOMAIN_SIZE must be positive, got ", mine.domainSize);
  TIERCC_REQUIRE_ARG(mine.domainId >= -1, "TIERCC_DOMAIN_ID must be non-negative, got ", mine.domainId);
  mine.cacheBytes = scaleUpLink_->spec().paced() ? 0 : coreCacheBytes();
  const std::string transportName = size > 1 ? defaultTransportName() : "none";
  const std::string scaleUpAsked = params::getString("TIERCC_SCALEUP");
  TIERCC_REQUIRE_ARG(scaleUpAsked == "auto" || scaleUpAsked == "shm" || scaleUpAsked == "emulated",
                     "TIERCC_SCALEUP must be auto, shm or emulated, got '", scaleUpAsked, "'");
  mine.settings = concat("transport=", transportName, " scaleup=", scaleUpAsked, " shm_chunk=", window_.describe(),
                         " allreduce_oneshot_bytes=", oneShotLimitBytes_,
                         " shm_copy=", params::getString("TIERCC_SHM_COPY"), " algo=", params::getString("TIERCC_ALGO"),
                         " path=", params::getString("TIERCC_PATH"), " knomial_radix=", knomialRadix_,
                         " pipeline_slots=", pipelineSlots_, " tune=", tierModel_.scaleUp.describe(), "/",
                         tierModel_.scaleOut.describe(), "/", tierModel_.local.describe(), "/",
                         tierModel_.crossMemory.describe(), " probe=", params::getBool("TIERCC_TUNE_PROBE"));
  // The rank whose process hosts the store says so (rank 0 of the world; in a split, whichever
  // rank that process is), before the rank infos every rank reads.
  if (setup_.hostedServer) store_->setString("store/host-rank", std::to_string(rank));
  std::vector<RankInfo> all;
  for (const std::string& info : allgatherThroughStore(*store_, rank, size, "rank/", mine.encode(), deadline))
    all.push_back(RankInfo::decode(info));
  // Ranks that disagree would desynchronise or time out later: every rank stops here instead,
  // with the same message.
  for (int r = 1; r < size; ++r)
    if (all[r].settings != all[0].settings)
      fail(ErrorCode::InvalidArgument, "ranks disagree on their settings: rank 0 has '", all[0].settings, "', rank ", r,
           " has '", all[r].settings, "' (set TIERCC_TRANSPORT, TIERCC_SHM_CHUNK, ... alike on every rank)");
  topo_ = detectTopology(all, rank);
  // Every rank prices with the smallest cache, and with none where a domain is emulated (its
  // windows are not one host's memory).
  std::size_t cacheBytes = all[0].cacheBytes;
  bool emulatedSomewhere = scaleUpAsked == "emulated";
  for (int r = 0; r < size; ++r) {
    cacheBytes = std::min(cacheBytes, all[r].cacheBytes);
    emulatedSomewhere = emulatedSomewhere || all[r].hostId != all[topo_.rankAt(topo_.domainOf(r), 0)].hostId;
  }
  tierModel_.cacheBytes = emulatedSomewhere ? 0 : cacheBytes;
  if (store_->check({"store/host-rank"}))
    storeHostRank_ = std::atoi(store_->getString("store/host-rank", deadline).c_str());
  hostIndex_ = static_cast<int>(
      std::count_if(all.begin(), all.begin() + rank, [&](const RankInfo& r) { return r.hostId == mine.hostId; }));

  // Tier 0: shm when every member of the domain is on this host, else the emulated backend
  // (memory semantics over a transport of the domain's own); TIERCC_SCALEUP may force either.
  const int dom = topo_.domain();
  std::vector<std::string> names;
  std::string elsewhere;  // a member on another host, for messages
  for (int member : topo_.members(dom)) {
    if (all[member].hostId != mine.hostId && elsewhere.empty())
      elsewhere = concat(topo_.nameRank(member), " is on ", all[member].hostId, ", this rank on ", mine.hostId);
    names.push_back(topo_.nameRank(member));
  }
  const std::string scaleUp = scaleUpAsked != "auto" ? scaleUpAsked : elsewhere.empty() ? "shm" : "emulated";
  if (scaleUp == "shm" && !elsewhere.empty())
    fail(ErrorCode::NotSupported, "domain ", dom, " spans hosts (", elsewhere,
         "): TIERCC_SCALEUP=shm needs every member on one host (use auto or emulated)");
  TIERCC_LOG(Info, Init) << "scale-up backend of domain " << dom << ": " << scaleUp
                         << (scaleUpAsked == "auto" ? " (auto)" : " (TIERCC_SCALEUP)");
  ShmDomainConfig shm;
  shm.segmentPrefix = "/tiercc-" + name() + "-d" + std::to_string(dom);
  shm.localRank = topo_.localRank();
  shm.peerNames = names;
  // Every rank has the same shape and model here, so auto gives every rank the same window.
  shm.windowBytes = window_.resolve(shapeOf(topo_), tierModel_, pipelineSlots_);
  TIERCC_LOG(Info, Init) << "staging window: " << shm.windowBytes << " bytes per rank ("
                         << (window_.asked ? "TIERCC_SHM_CHUNK" : "auto: the cost model's") << ")";
  shm.setupDeadline = deadline;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const auto onHost = std::count_if(all.begin(), all.end(), [&](const RankInfo& r) { return r.hostId == mine.hostId; });
  shm.oversubscribed = cores > 0 && onHost > cores;
  if (scaleUp == "emulated") {
    EmulatedDomainConfig emu{shm.localRank, names, shm.windowBytes, !elsewhere.empty(), timeout_};
    PrefixStore domainStore(store_, "emu/d" + std::to_string(dom) + "/");
    domain_ = createEmulatedDomain(transportName, domainStore, std::move(emu), deadline);
  } else {
    PrefixStore domainStore(store_, "shm/d" + std::to_string(dom) + "/");
    domain_ = std::make_unique<ShmDomain>(domainStore, shm);
  }

  // Tier 1: collectives use the rail peers (same local rank, other domains), connected now;
  // send/recv and the flat algorithms may address anyone, connected on first use.
  sendSeq_.assign(size, 0);
  recvSeq_.assign(size, 0);
  if (size > 1) {
    TransportSetup ts;
    ts.rank = rank;
    ts.worldSize = size;
    for (int r = 0; r < size; ++r)
      if (r != rank) ts.peers.push_back(r);
    ts.connectAtInit = topo_.railPeers();
    ts.laterStore = store_;
    ts.peerName = [this](int r) { return topo_.nameRank(r); };
    ts.deadline = deadline;
    ts.localRank = topo_.localRank();
    ts.spansHosts = std::any_of(all.begin(), all.end(), [&](const RankInfo& r) { return r.hostId != mine.hostId; });
    transport_ = createTransport(transportName, *store_, ts);
  }
  if (params::getBool("TIERCC_TUNE_PROBE")) {
    const ProbeSample sample = probeTiers(topo_, *domain_, transport_.get(), scaleOutLink_->spec().paced(),
                                          scaleUpLink_->spec().paced(), deadline);
    tierModel_ = shareProbes(*store_, topo_, sample, tierModel_, deadline);
    tierModelSource_ = "probed at init";
  }
  // This rank, and the paths beyond staging its domain can take (the same on every rank of it).
  RankView view;
  view.rank = topo_.rank();
  view.domainSize = topo_.domainSize();
  view.crossMemory = domain_->crossMemoryAttach();
  view.forced = pathOverride_;
  selector_ = std::make_unique<Selector>(shapeOf(topo_), tierModel_, algoOverrides_, oneShotLimitBytes_, view);
  windowBytes_ = domain_->windowBytes();
  // The same on every rank: the settings check made them choose the same transport.
  railMessageBytes_ = transport_ ? transport_->preferredMessageBytes() : 0;
  symmetric_ = domain_->symmetric();
  scratch_.accumulate.allocate(accumulateBytes(shm.windowBytes));
  scratch_.receive.allocate(receiveBytes(shm.windowBytes, topo_.numDomains()));
}

}  // namespace tiercc
