// PrefixStore: a namespace inside another store, so that independent users of one store
// (communicators, splits, tests) cannot collide on key names.
#include <utility>

#include "core/errors.hpp"
#include "bootstrap/store.hpp"

namespace tiercc {

PrefixStore::PrefixStore(std::shared_ptr<Store> base, std::string prefix)
    : base_(std::move(base)), prefix_(std::move(prefix)) {
  TIERCC_REQUIRE_ARG(base_ != nullptr, "PrefixStore: base store is null (prefix '", prefix_, "')");
}

void PrefixStore::set(const std::string& key, const Bytes& value) { base_->set(prefix_ + key, value); }

Bytes PrefixStore::get(const std::string& key, Deadline deadline) { return base_->get(prefix_ + key, deadline); }

std::int64_t PrefixStore::add(const std::string& key, std::int64_t delta) { return base_->add(prefix_ + key, delta); }

void PrefixStore::wait(const std::vector<std::string>& keys, Deadline deadline) {
  base_->wait(prefixed(keys), deadline);
}

bool PrefixStore::check(const std::vector<std::string>& keys) { return base_->check(prefixed(keys)); }

void PrefixStore::erase(const std::string& key) { base_->erase(prefix_ + key); }

std::vector<std::string> PrefixStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& key : keys) out.push_back(prefix_ + key);
  return out;
}

}  // namespace tiercc
