// Turns the byte stream of one rank's stdout or stderr into whole, prefixed lines.
// A line longer than kMaxLineBytes is cut so a rank that never prints a newline cannot
// make the launcher buffer without bound.
#include "tools/run/line_prefixer.hpp"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace tiercc::run {
namespace {
constexpr std::size_t kMaxLineBytes = 64 * 1024;
}  // namespace

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

LinePrefixer::LinePrefixer(int outFd, std::string prefix) : outFd_(outFd), prefix_(std::move(prefix)) {}

void LinePrefixer::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    auto newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      pending_.append(bytes);
      if (pending_.size() >= kMaxLineBytes) flush();
      return;
    }
    std::string_view head = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    if (pending_.empty()) {
      writeLine(head);
    } else {
      pending_.append(head);
      writeLine(pending_);
      pending_.clear();
    }
  }
}

void LinePrefixer::flush() {
  if (pending_.empty()) return;
  writeLine(pending_);
  pending_.clear();
}

void LinePrefixer::writeLine(std::string_view line) {
  std::string out;
  out.reserve(prefix_.size() + line.size() + 1);
  out.append(prefix_).append(line).push_back('\n');
  writeAll(outFd_, out);
}

}  // namespace tiercc::run
