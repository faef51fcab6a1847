// The store's wire format (bootstrap/store_protocol.*), as the server decodes what any client
// sends and the client decodes what the server answers: the first byte picks the decoder, the
// rest is its input. A body that decodes must encode back to the same body.
#include <cstddef>
#include <cstdint>
#include <span>

#include "bootstrap/store.hpp"
#include "bootstrap/store_protocol.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace proto = tiercc::store_protocol;
using tiercc::fuzz::finding;
using tiercc::fuzz::refusalIsFine;

namespace {

bool sameBody(const tiercc::Bytes& frame, std::span<const std::uint8_t> body) {
  return frame.size() == proto::kHeaderBytes + body.size() &&
         std::equal(body.begin(), body.end(), frame.begin() + proto::kHeaderBytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> body(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      refusalIsFine([&] {
        const proto::Request request = proto::decodeRequest(body);
        if (!sameBody(proto::encodeRequestFrame(request), body)) finding("a decoded request encodes differently");
      });
      break;
    case 1:
      refusalIsFine([&] {
        const proto::Reply reply = proto::decodeReply(body);
        if (!sameBody(proto::encodeReplyFrame(reply), body)) finding("a decoded reply encodes differently");
      });
      break;
    case 2:
      if (body.size() < proto::kHeaderBytes) return 0;
      refusalIsFine([&] {
        proto::FrameHeader header{};
        std::copy_n(body.begin(), header.size(), header.begin());
        const std::uint32_t length = proto::decodeFrameLength(header, tiercc::TcpStoreServer::kMaxFrameBytes);
        if (length == 0 || length > tiercc::TcpStoreServer::kMaxFrameBytes) finding("a frame length past the limit");
      });
      break;
  }
  return 0;
}
