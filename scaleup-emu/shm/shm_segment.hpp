// A POSIX shared-memory segment (shm_open + mmap) that is unlinked as soon as every peer has
// mapped it, so that nothing is left in /dev/shm even if a rank crashes later.
#pragma once

#include <cstddef>
#include <string>

namespace tiercc {

class ShmSegment {
 public:
  /// Creates (exclusive), reserves (every page, so none can SIGBUS later) and maps a segment of
  /// `bytes` named `name` ("/tiercc-..."); SystemError, nothing left behind, when it does not fit.
  static ShmSegment create(const std::string& name, std::size_t bytes);
  /// Maps an existing segment created by a peer.
  static ShmSegment open(const std::string& name, std::size_t bytes);
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;

  /// Removes the name; the memory lives on while mapped.
  void unlink();
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool owner_ = false;  // created it, so unlinks it if still named at destruction
};

}  // namespace tiercc
