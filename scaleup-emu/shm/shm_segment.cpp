// POSIX shared-memory segments (see shm_segment.hpp).
#include "scaleup-emu/shm/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include "core/errors.hpp"

namespace tiercc {
namespace {

std::byte* mapFd(int fd, std::size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    ::close(fd);
    failErrno("mmap of shared-memory segment " + name, err);
  }
  ::close(fd);
  return static_cast<std::byte*>(p);
}

// posix_fallocate's error (0: done); a signal may interrupt it on a large segment.
int reserve(int fd, std::size_t bytes) {
  int err = 0;
  do err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  while (err == EINTR);
  return err;
}

std::uint64_t freeShmBytes() {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return 0;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

}  // namespace

ShmSegment ShmSegment::create(const std::string& name, std::size_t bytes) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) failErrno("shm_open(" + name + ", O_CREAT|O_EXCL)");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    ::close(fd);
    shm_unlink(name.c_str());
    failErrno("ftruncate of shared-memory segment " + name + " (is /dev/shm large enough?)", err);
  }
  // On tmpfs ftruncate only sets the size: a page that finds /dev/shm full when first touched
  // raises SIGBUS. Reserving every page now turns that into an error here.
  if (int err = reserve(fd, bytes); err != 0) {
    ::close(fd);
    shm_unlink(name.c_str());
    if (err == ENOSPC)
      fail(ErrorCode::SystemError, "shared-memory segment ", name, " of ", bytes, " bytes does not fit in /dev/shm, ",
           "which has ", freeShmBytes(), " bytes free: free some, enlarge it (docker run --shm-size) or ask for less");
    failErrno("posix_fallocate of shared-memory segment " + name, err);
  }
  ShmSegment s;
  s.name_ = name;
  s.size_ = bytes;
  s.owner_ = true;
  try {
    s.data_ = mapFd(fd, bytes, name);
  } catch (...) {
    shm_unlink(name.c_str());
    throw;
  }
  return s;
}

ShmSegment ShmSegment::open(const std::string& name, std::size_t bytes) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) failErrno("shm_open(" + name + ")");
  // A peer with another TIERCC_SHM_CHUNK made a smaller segment: touching past its end would
  // raise SIGBUS, so say what differs instead.
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < bytes) {
    ::close(fd);
    fail(ErrorCode::InvalidArgument, "shared-memory segment ", name, " has ", st.st_size, " bytes, this rank expects ",
         bytes, ": is TIERCC_SHM_CHUNK the same on every rank?");
  }
  ShmSegment s;
  s.name_ = name;
  s.size_ = bytes;
  s.data_ = mapFd(fd, bytes, name);
  return s;
}

ShmSegment::~ShmSegment() {
  if (data_) munmap(data_, size_);
  if (owner_) shm_unlink(name_.c_str());
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : name_(std::move(o.name_)), data_(std::exchange(o.data_, nullptr)), size_(o.size_),
      owner_(std::exchange(o.owner_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    this->~ShmSegment();
    new (this) ShmSegment(std::move(o));
  }
  return *this;
}

void ShmSegment::unlink() {
  if (owner_) shm_unlink(name_.c_str());
  owner_ = false;
}

}  // namespace tiercc
