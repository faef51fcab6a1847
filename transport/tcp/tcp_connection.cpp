// Progress of one TCP connection (see tcp_connection.hpp).
#include "transport/tcp/tcp_connection.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.hpp"

namespace tiercc::tcpnet {

void Connection::poison(ErrorCode code, const std::string& why) {
  if (error.empty()) {
    error = why;
    errorCode = code;
  }
  sends.clear();
  recvs.clear();
  notifies.clear();
}

void Connection::progress(RegionTable& regions) {
  if (!error.empty()) return;
  progressSends();
  if (error.empty()) progressReceives(regions);
  matchNotifications();
}

// Small queued messages go out together, up to kSendBatch of them and kSendBatchBytes in one
// sendmsg: a step that posts many small blocks to one peer (the hierarchical all-to-all sends
// one message per block) costs one system call, not one per message. Larger ones go one per
// call, as before the batches: a first, uncapped version ran a 16 MiB all-to-all on the 20
// Gbit/s two-tier network in 12-16 ms against 9, in runs whose spread may explain it, and the
// cap keeps what was not measured unchanged (docs/performance.md).
void Connection::progressSends() {
  while (!sends.empty()) {
    iovec iov[2 * kSendBatch];
    int n = 0;
    std::size_t batch = 0, bytes = 0;
    for (; batch < std::min(sends.size(), kSendBatch); ++batch) {
      Outgoing& out = sends[batch];
      const std::size_t done = batch == 0 ? txDone : 0;  // only the front message may be part sent
      const std::size_t left = sizeof(WireHeader) + out.op->len - done;
      if (batch > 0 && bytes + left > kSendBatchBytes) break;
      bytes += left;
      if (done < sizeof(WireHeader))
        iov[n++] = {reinterpret_cast<char*>(&out.header) + done, sizeof(WireHeader) - done};
      const std::size_t payloadDone = done > sizeof(WireHeader) ? done - sizeof(WireHeader) : 0;
      if (out.op->len > payloadDone) iov[n++] = {out.op->buf + payloadDone, out.op->len - payloadDone};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n);
    ssize_t sent = ::sendmsg(fd(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      return poison(ErrorCode::PeerFailure,
                    concat(name, " failed on the scale-out tier (tcp send: ", std::strerror(errno), ")"));
    }
    std::size_t left = static_cast<std::size_t>(sent);
    for (std::size_t i = 0; i < batch; ++i) {
      TransferOp& op = *sends.front().op;
      const std::size_t total = sizeof(WireHeader) + op.len, take = std::min(left, total - txDone);
      txDone += take;
      left -= take;
      op.doneBytes = txDone > sizeof(WireHeader) ? txDone - sizeof(WireHeader) : 0;
      if (txDone < total) return;  // the socket is full
      op.complete = true;
      txDone = 0;
      sends.pop_front();
    }
  }
}

// Reads into `dst`; returns false when the socket has nothing more now (or failed: poisoned).
static bool readSome(Connection& c, void* dst, std::size_t len, std::size_t& done) {
  ssize_t got = ::recv(c.fd(), static_cast<char*>(dst) + done, len - done, MSG_DONTWAIT);
  if (got > 0) {
    done += static_cast<std::size_t>(got);
    return true;
  }
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  c.poison(ErrorCode::PeerFailure,
           concat(c.name, " closed its scale-out connection: it failed or aborted (tcp",
                  got < 0 ? std::string(": ") + std::strerror(errno) : std::string(), ")"));
  return false;
}

std::optional<std::string> headerFault(const WireHeader& header) {
  if (header.magic != kMagic) return "bad magic";
  if (header.kind != Kind::Send && header.kind != Kind::Write)
    return concat("unknown message kind ", static_cast<std::uint32_t>(header.kind));
  return std::nullopt;
}

void Connection::progressReceives(RegionTable& regions) {
  while (error.empty()) {
    if (rxHeaderBytes < sizeof(WireHeader)) {
      if (!readSome(*this, &rx, sizeof(WireHeader), rxHeaderBytes)) return;
      if (rxHeaderBytes < sizeof(WireHeader)) continue;
      if (auto fault = headerFault(rx))
        return poison(ErrorCode::TransportError, concat("garbage on the connection from ", name, " (", *fault, ")"));
      rxPayloadDone = 0;
    }
    std::byte* dst = nullptr;
    if (rx.kind == Kind::Send) {
      if (recvs.empty()) return;  // the message waits in the socket until a receive is posted
      TransferOp& op = *recvs.front();
      if (rx.tag != op.tag || rx.len != op.len)
        return poison(ErrorCode::InvalidArgument,  // the ranks called different operations
                      concat("message from ", name, " does not match the posted receive: got tag ", rx.tag,
                             " length ", rx.len, ", expected tag ", op.tag, " length ", op.len,
                             " (mismatched collectives across ranks?)"));
      dst = op.buf;
    } else {  // Kind::Write: headerFault() let no other kind through
      dst = regions.resolve(rx.region, rx.offset, rx.len);
      if (!dst)
        return poison(ErrorCode::TransportError,
                      concat(name, " wrote ", rx.len, " bytes at offset ", rx.offset, " of region ", rx.region,
                             ", which is not registered here or too small"));
    }
    while (rxPayloadDone < rx.len)
      if (!readSome(*this, dst, rx.len, rxPayloadDone)) return;
    if (rx.kind == Kind::Send) {
      recvs.front()->doneBytes = rx.len;
      recvs.front()->complete = true;
      recvs.pop_front();
    } else {
      arrived.emplace_back(static_cast<std::uint32_t>(rx.tag), rx.len);
    }
    rxHeaderBytes = 0;
  }
}

void Connection::matchNotifications() {
  while (!notifies.empty() && !arrived.empty()) {
    TransferOp& op = *notifies.front();
    op.tag = arrived.front().first;
    op.len = arrived.front().second;
    op.complete = true;
    notifies.pop_front();
    arrived.pop_front();
  }
}

}  // namespace tiercc::tcpnet
