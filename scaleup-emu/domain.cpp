// Defaults of the optional Domain capabilities (see domain.hpp): backends without symmetric
// memory or cross-memory attach say so clearly.
#include "scaleup-emu/domain.hpp"

#include "core/errors.hpp"

namespace tiercc {

void* Domain::allocateSymmetric(Store&, std::size_t, Deadline) {
  fail(ErrorCode::NotSupported, "allocShared: the ", name(), " scale-up backend has no symmetric memory");
}

void Domain::freeSymmetric(void*) {
  fail(ErrorCode::NotSupported, "freeShared: the ", name(), " scale-up backend has no symmetric memory");
}

void Domain::readPeer(int peer, std::uint64_t, void*, std::size_t) {
  fail(ErrorCode::NotSupported, "the ", name(), " scale-up backend cannot read local rank ", peer,
       "'s memory directly");
}

}  // namespace tiercc
