// Building blocks every collective uses: the per-round epoch protocol on the domain's windows,
// and batches of scale-out transfers that are posted together and waited for together.
#pragma once

#include <deque>

#include "exec/context.hpp"

namespace tiercc {

/// Starts a round: waits until every domain peer has released the previous round (so this
/// rank may overwrite its window) and returns the round's epoch.
std::uint32_t beginRound(CollContext& ctx);
/// Starts a round of a pipeline that keeps `inFlight` rounds in separate parts of the window:
/// waits only until every peer released the round `inFlight` back, the last one to use this
/// round's part. The first round of a collective must use beginRound.
std::uint32_t beginRoundReusing(CollContext& ctx, std::uint32_t inFlight);
/// Ends a round: this rank has finished reading its peers' windows.
void endRound(CollContext& ctx, std::uint32_t epoch);
/// Waits until local rank `peer` has raised `flag` to `epoch`.
void waitPeer(CollContext& ctx, int peer, DomainFlag flag, std::uint32_t epoch);

/// Tag of phase `phase` of round `chunk` of this collective; unique per (seq, chunk, phase).
inline std::uint64_t roundTag(const CollContext& ctx, std::uint64_t chunk, std::uint64_t phase) {
  return (ctx.seq << 32) | (chunk << 8) | phase;
}

/// Transport operations posted together; wait() completes them all. The bytes sent are counted
/// when posted, on the tier of the peer (same domain: scale-up), and, with a link model, paid
/// in wait(): the batch is one step of the model.
class TransferBatch {
 public:
  explicit TransferBatch(CollContext& ctx) : ctx_(ctx) {}
  void send(int peer, std::uint64_t tag, const std::byte* buf, std::size_t len);
  void recv(int peer, std::uint64_t tag, std::byte* buf, std::size_t len);
  /// Posts nothing more; waits for everything posted so far.
  void wait();

 private:
  CollContext& ctx_;
  std::deque<TransferOp> ops_;  // deque: posted ops must not move
  std::vector<TransferOp*> pending_;
  std::size_t sentBytes_ = 0;    // sent across domains since the last wait(), for the link model
  std::size_t insideBytes_ = 0;  // sent to ranks of this domain since the last wait()
  bool sent_ = false;            // a send across domains was posted (it may be empty)
  bool sentInside_ = false;      // a send inside the domain was posted
  Clock::time_point firstPost_;  // when this step's transfers began
};

/// Elements per round when each round needs `unitsPerElement` element-sized slots of
/// `capacityBytes`; NotSupported when not even one element per slot fits.
inline std::size_t elementsPerRound(std::size_t capacityBytes, std::size_t unitsPerElement, std::size_t es) {
  std::size_t n = capacityBytes / (unitsPerElement * es);
  if (n == 0)
    fail(ErrorCode::NotSupported, "a round needs ", unitsPerElement, " slots of ", es, " bytes but the window has ",
         capacityBytes, " bytes: raise TIERCC_SHM_CHUNK to at least ", unitsPerElement * es);
  return n;
}

}  // namespace tiercc
