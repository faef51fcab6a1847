// Turns the byte stream of one rank's stdout or stderr into whole, prefixed lines.
// Each line goes out in one write() so lines of different ranks never interleave mid-line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tiercc::run {

class LinePrefixer {
 public:
  /// Lines are written to outFd (not owned), each starting with prefix.
  LinePrefixer(int outFd, std::string prefix);

  /// Appends bytes read from the rank and writes every line they complete.
  void feed(std::string_view bytes);
  /// Writes the unfinished last line, if any, with a newline added (at EOF).
  void flush();

 private:
  void writeLine(std::string_view line);

  int outFd_;
  std::string prefix_;
  std::string pending_;  // bytes after the last newline seen
};

/// Writes all of data to fd, retrying on EINTR and partial writes. Returns false when the
/// reader went away (EPIPE) or another error occurred: output is then dropped, never fatal.
bool writeAll(int fd, std::string_view data);

}  // namespace tiercc::run
