// How large a staging window (per rank) the cost model asks for. The window bounds the bytes a
// plan keeps in flight: a pipelined plan cuts its fragments from it (window / slots each), and
// each fragment pays its latency steps. Where one fragment's trip (its scale-up steps, its rail
// transfer and the rails' latency) is long next to the time the busiest tier spends on a
// window's worth of bytes, more slots cannot hide it: only more bytes in flight can (NVL72
// figures: the default 4 MiB window leaves a 1 GiB allreduce on 100,000 GPUs at 1.8x its busiest
// tier, 32 MiB brings it to 1.06x; docs/simulator.md). On this host's figures (30 us a rail
// message at 1.25 GB/s) the default suffices. The runtime sizes its window through here at init
// (TIERCC_SHM_CHUNK=auto) and tiercc-sim prices with the same choice.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plan/cost_model.hpp"
#include "plan/plan.hpp"

namespace tiercc {

/// Auto takes the smallest window whose steady pipeline runs within this factor of the one the
/// largest allowed window gives: beyond it, doubling the memory buys less than 5%.
inline constexpr double kWindowSlack = 1.05;
/// How many of the largest window's worth the reference allreduce moves: enough that filling and
/// draining the pipeline do not count.
inline constexpr std::size_t kWindowReferenceWindows = 64;

/// The window the cost model asks for on `shape`: minBytes times the smallest power of two, at
/// most maxBytes, at which a long hierarchical allreduce (kWindowReferenceWindows times maxBytes)
/// is priced within kWindowSlack of its price at maxBytes. `slots`: Request::slots (0: the cost
/// model's depth at each window). minBytes where nothing pipelines (one rank), or maxBytes <=
/// minBytes.
std::size_t windowFromModel(const Shape& shape, const TierModel& model, std::size_t minBytes, std::size_t maxBytes,
                            std::uint32_t slots = 0);

}  // namespace tiercc
