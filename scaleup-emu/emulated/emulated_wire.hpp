// The emulated Domain's wire format and the records its callers and progress thread share
// (private to scaleup-emu/emulated/). Per peer and in order: a fixed WireHeader, then what it
// announces:
//  - Signal: `nranges` changed ranges of the sender's window, `bytes` in all. With one range
//    the header carries it; with more, a table of ByteRange follows. Then one data message per
//    range, received straight into the replica. The flag is raised once all have arrived.
//  - Poison: `bytes` of the reason.   - Bye: nothing; the sender will send no more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scaleup-emu/emulated/emulated_domain.hpp"
#include "scaleup-emu/emulated/window_diff.hpp"
#include "transport/transport.hpp"

namespace tiercc {

namespace emulated_wire {
inline constexpr std::uint32_t kMagic = 0x554d4545;  // "EEMU"
enum Kind : std::uint32_t { kSignal = 1, kPoison = 2, kBye = 3 };
enum Tag : std::uint64_t { kTagHeader = 0xE0, kTagTable = 0xE1, kTagData = 0xE2, kTagReason = 0xE3 };
inline constexpr std::size_t kMaxReason = 4000;
}  // namespace emulated_wire

struct EmulatedDomain::WireHeader {
  std::uint32_t magic = emulated_wire::kMagic;
  std::uint32_t kind = emulated_wire::kSignal;
  std::uint32_t flag = 0;
  std::uint32_t value = 0;
  std::uint32_t nranges = 0;
  std::uint32_t reserved = 0;
  std::uint64_t bytes = 0;   // data (Signal) or reason (Poison) bytes that follow
  std::uint64_t offset = 0;  // Signal with one range: where it goes
};
static_assert(sizeof(EmulatedDomain::WireHeader) == 40);

// One signal, poison or goodbye to every peer. Its ranges point into the shadow, which
// signal() leaves alone while they are in flight. Signal entries are recycled (spare_), so
// their vectors keep their capacity and a steady stream of signals allocates nothing.
struct EmulatedDomain::Outgoing {
  WireHeader header;
  std::vector<ByteRange> ranges;
  std::string reason;
  bool posted = false;                       // progress thread only
  std::vector<std::vector<TransferOp>> ops;  // progress thread only; per local rank, empty once done with it
  std::vector<std::uint8_t> pending;         // under mu_: per local rank, sends not yet complete (for errors)
};

struct EmulatedDomain::Incoming {
  enum class Stage { Header, Table, Data, Reason, Closed };
  Stage stage = Stage::Closed;
  WireHeader header;
  std::vector<ByteRange> table;
  std::string reason;
  std::vector<TransferOp> ops;  // the receives of the current stage, in posting order
};

}  // namespace tiercc
