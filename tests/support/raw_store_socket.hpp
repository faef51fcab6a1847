// A raw client of the TCP store, for feeding the server bytes no real client would send, and the
// frames to send it (tests/store_test.cpp, tests/store_limits_test.cpp).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <optional>

#include "bootstrap/store_protocol.hpp"
#include "core/errors.hpp"

namespace tiercc::test {

namespace proto = store_protocol;

class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    timeval timeout{4, 0};  // a silent server fails the test (in 4 s), not hangs it
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in addr = loopback(port);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) failErrno("connect");
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
  }

  void send(const Bytes& data) {
    ASSERT_EQ(::send(fd_, data.data(), data.size(), MSG_NOSIGNAL), static_cast<ssize_t>(data.size()));
  }

  // Reads one reply frame; nullopt when the connection ended first.
  std::optional<proto::Reply> readReply() {
    proto::FrameHeader header{};
    if (!readExactly(header.data(), header.size())) return std::nullopt;
    Bytes body(proto::decodeFrameLength(header, proto::kMaxReplyBytes));
    if (!readExactly(body.data(), body.size())) return std::nullopt;
    return proto::decodeReply(body);
  }

  // True when the server closed its side (rather than staying silent until the receive timeout).
  bool closedByPeer() {
    std::uint8_t byte = 0;
    return ::recv(fd_, &byte, 1, 0) == 0;
  }

 private:
  bool readExactly(std::uint8_t* data, std::size_t size) {
    while (size > 0) {
      ssize_t n = ::recv(fd_, data, size, 0);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }
  int fd_;
};

inline  // A frame announcing `length` bytes followed by `body` (which may have another length).
    Bytes
    frameOf(std::uint32_t length, const Bytes& body) {
  Bytes frame;
  frame.reserve(proto::kHeaderBytes + body.size());
  for (std::size_t i = 0; i < proto::kHeaderBytes; ++i) frame.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
  for (std::uint8_t byte : body) frame.push_back(byte);
  return frame;
}

inline Bytes frameOf(const Bytes& body) { return frameOf(static_cast<std::uint32_t>(body.size()), body); }

}  // namespace tiercc::test
