// The store server's data and parked waiters (see store_server_state.hpp).
#include "bootstrap/store_server_state.hpp"

#include "bootstrap/store_session.hpp"
#include "core/errors.hpp"

namespace tiercc::store_server {

StoreState::Outcome StoreState::handle(const proto::Request& request, const std::shared_ptr<Session>& session) {
  checkSizes(request);
  if (request.op == proto::Op::Get || request.op == proto::Op::Wait) return getOrWait(request, session);
  return answer(request);
}

proto::Reply StoreState::answer(const proto::Request& request) {
  proto::Reply reply;
  switch (request.op) {
    case proto::Op::Set: {
      const std::string& key = request.keys.front();
      const auto before = sizeAt(key);
      checkRoom(key, request.value.size());
      data_[key] = request.value;
      account(key, before);
      wake(key);
      break;
    }
    case proto::Op::Add: {
      const std::string& key = request.keys.front();
      const auto before = sizeAt(key);
      checkRoom(key, 20);  // the longest decimal int64
      reply.number = proto::addToCounter(data_, key, request.delta);
      account(key, before);
      wake(key);
      break;
    }
    case proto::Op::Check:
      reply.number = proto::missingKeys(data_, request.keys).empty() ? 1 : 0;
      break;
    case proto::Op::Erase: {
      const std::string& key = request.keys.front();
      if (auto before = sizeAt(key)) heldBytes_ -= entryBytes(key, *before);
      data_.erase(key);
      break;
    }
    default:
      fail(ErrorCode::Internal, "store server: unexpected ", proto::toString(request.op));
  }
  return reply;
}

void StoreState::checkSizes(const proto::Request& request) const {
  for (const auto& key : request.keys) {
    if (key.size() > limits_.maxKeyBytes) {
      fail(ErrorCode::InvalidArgument, "store: a key of ", key.size(), " bytes is over the limit of ",
           limits_.maxKeyBytes, " bytes");
    }
  }
  if (request.op == proto::Op::Set && request.value.size() > limits_.maxValueBytes) {
    fail(ErrorCode::InvalidArgument, "store: a value of ", request.value.size(), " bytes is over the limit of ",
         limits_.maxValueBytes, " bytes");
  }
}

std::optional<std::size_t> StoreState::sizeAt(const std::string& key) const {
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second.size();
}

void StoreState::checkRoom(const std::string& key, std::size_t valueBytes) const {
  const auto before = sizeAt(key);
  const std::size_t released = before ? entryBytes(key, *before) : 0;
  const std::size_t after = heldBytes_ - released + entryBytes(key, valueBytes);
  if (after > limits_.maxTotalBytes) {
    fail(ErrorCode::InvalidArgument, "store: full: it holds ", heldBytes_, " bytes in ", data_.size(),
         " keys, and storing ", valueBytes, " bytes at '", key, "' would pass the limit of ", limits_.maxTotalBytes,
         " bytes");
  }
}

void StoreState::account(const std::string& key, std::optional<std::size_t> before) {
  if (before) heldBytes_ -= entryBytes(key, *before);
  heldBytes_ += entryBytes(key, data_.at(key).size());
}

StoreState::Outcome StoreState::getOrWait(const proto::Request& request, const std::shared_ptr<Session>& session) {
  auto missing = proto::missingKeys(data_, request.keys);
  if (missing.empty()) return okReply(request);
  if (request.timeoutMs == 0) return proto::Reply{proto::Status::Timeout, {}, 0, missing, {}};
  auto waiter = std::make_shared<Waiter>(executor_, session, request);
  if (request.timeoutMs != proto::kWaitForever && request.timeoutMs < proto::kLongestTimeoutMs) {
    waiter->timer.expires_after(std::chrono::milliseconds(request.timeoutMs));
    waiter->timer.async_wait([this, waiter](error_code ec) {
      if (!ec) expire(waiter);
    });
  }
  park(waiter, missing.front());
  return waiter;
}

proto::Reply StoreState::okReply(const proto::Request& request) const {
  proto::Reply reply;
  if (request.op == proto::Op::Get) reply.value = data_.at(request.keys.front());
  return reply;
}

void StoreState::park(const std::shared_ptr<Waiter>& waiter, const std::string& missingKey) {
  waiter->filedUnder = missingKey;
  waiters_[missingKey].push_back(waiter);
}

void StoreState::unfile(const std::shared_ptr<Waiter>& waiter) {
  auto it = waiters_.find(waiter->filedUnder);
  if (it == waiters_.end()) return;
  std::erase(it->second, waiter);
  if (it->second.empty()) waiters_.erase(it);
}

// Re-examines the waiters filed under key: each completes or is re-filed under its next missing key.
void StoreState::wake(const std::string& key) {
  auto node = waiters_.extract(key);
  if (node.empty()) return;
  for (const auto& waiter : node.mapped()) {
    if (waiter->done) continue;
    auto missing = proto::missingKeys(data_, waiter->request.keys);
    if (missing.empty()) {
      complete(waiter, okReply(waiter->request));
    } else {
      park(waiter, missing.front());
    }
  }
}

void StoreState::complete(const std::shared_ptr<Waiter>& waiter, const proto::Reply& reply) {
  waiter->done = true;
  waiter->timer.cancel();
  if (auto session = waiter->session.lock()) session->finishWait(reply);
}

void StoreState::expire(const std::shared_ptr<Waiter>& waiter) {
  if (waiter->done) return;
  unfile(waiter);
  auto missing = proto::missingKeys(data_, waiter->request.keys);
  complete(waiter, proto::Reply{proto::Status::Timeout, {}, 0, missing, {}});
}

void StoreState::drop(const std::shared_ptr<Waiter>& waiter) {
  if (waiter->done) return;
  waiter->done = true;
  waiter->timer.cancel();
  unfile(waiter);
}

}  // namespace tiercc::store_server
