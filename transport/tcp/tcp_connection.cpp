// Progress of one TCP connection (see tcp_connection.hpp).
#include "transport/tcp/tcp_connection.hpp"

#include <sys/socket.h>

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

void Connection::progressSends() {
  while (!sends.empty()) {
    Outgoing& out = sends.front();
    TransferOp& op = *out.op;
    iovec iov[2];
    int n = 0;
    if (txDone < sizeof(WireHeader)) {
      iov[n++] = {reinterpret_cast<char*>(&out.header) + txDone, sizeof(WireHeader) - txDone};
      if (op.len) iov[n++] = {op.buf, op.len};
    } else {
      std::size_t payloadDone = txDone - sizeof(WireHeader);
      iov[n++] = {op.buf + payloadDone, op.len - payloadDone};
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
    txDone += static_cast<std::size_t>(sent);
    op.doneBytes = txDone > sizeof(WireHeader) ? txDone - sizeof(WireHeader) : 0;
    if (txDone < sizeof(WireHeader) + op.len) return;
    op.complete = true;
    txDone = 0;
    sends.pop_front();
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
