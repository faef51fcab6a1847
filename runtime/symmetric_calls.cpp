// Symmetric memory on a communicator (allocShared / freeShared): the scale-up backend makes
// the allocation with the rank's domain peers; core only orders it with the other operations.
#include "runtime/communicator_impl.hpp"
#include "core/errors.hpp"
#include "bootstrap/store.hpp"

namespace tiercc {

void* Communicator::Impl::allocShared(std::size_t bytes) {
  if (aborted_.load()) fail(ErrorCode::Aborted, "allocShared: the communicator was aborted");
  void* p = nullptr;
  // Inline on the queue: earlier asynchronous collectives finish first.
  queue_.runInline([&] {
    PrefixStore domainStore(store_, "shm/d" + std::to_string(topo_.domain()) + "/");
    p = domain_->allocateSymmetric(domainStore, bytes, Deadline::after(timeout_));
  });
  return p;
}

void Communicator::Impl::freeShared(void* p) {
  if (aborted_.load()) fail(ErrorCode::Aborted, "freeShared: the communicator was aborted");
  queue_.runInline([&] { domain_->freeSymmetric(p); });
}

void* Communicator::allocShared(std::size_t bytes) { return Impl::live(impl_, "allocShared").allocShared(bytes); }
void Communicator::freeShared(void* p) { Impl::live(impl_, "freeShared").freeShared(p); }

}  // namespace tiercc
