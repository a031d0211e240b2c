#include "util/file_lock.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <ostream>
#include <string>
#include <sys/file.h>
#include <unistd.h>

namespace kopt::util {

namespace {

// What the holder wrote into the lock file: "<pid>" or "<pid>: <what it does>"; "" when it
// wrote nothing yet.
std::string holder_of(int fd) {
  char text[256] = {};
  ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) {
    return "";
  }
  std::string line = std::string(text, static_cast<size_t>(n));
  return std::string(trim(line.substr(0, line.find('\n'))));
}

bool lock(int fd, int how) {
  while (::flock(fd, how) != 0) {
    if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

} // namespace

void FileLock::open(const std::filesystem::path &path) {
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path());
  }
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(path.string() + ": cannot open the lock file: " + std::strerror(errno));
  }
}

void FileLock::write_holder(const std::string &doing) {
  // Only for the waiting message: who holds the lock, and why.
  std::string pid = std::to_string(::getpid()) + (doing.empty() ? "" : ": " + doing) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

FileLock::FileLock(const std::filesystem::path &path, std::ostream *waiting, Mode mode,
                   const std::string &doing) {
  open(path);
  int how = mode == Mode::shared ? LOCK_SH : LOCK_EX;
  bool held = lock(fd_, how | LOCK_NB);
  if (!held && errno == EWOULDBLOCK) {
    if (waiting != nullptr) {
      std::string holder = holder_of(fd_);
      *waiting << "kopt: waiting for " << path.string()
               << (holder.empty() ? "" : " (held by pid " + holder + ")") << "\n"
               << std::flush;
    }
    held = lock(fd_, how);
  }
  if (!held) {
    int err = errno;
    ::close(fd_);
    throw Error(path.string() + ": cannot lock: " + std::strerror(err));
  }
  write_holder(doing);
}

std::unique_ptr<FileLock> FileLock::try_lock(const std::filesystem::path &path) {
  std::unique_ptr<FileLock> held(new FileLock());
  held->open(path);
  if (!lock(held->fd_, LOCK_EX | LOCK_NB)) {
    if (errno == EWOULDBLOCK) {
      return nullptr;
    }
    throw Error(path.string() + ": cannot lock: " + std::strerror(errno));
  }
  held->write_holder();
  return held;
}

std::optional<std::string> FileLock::holder(const std::filesystem::path &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  std::optional<std::string> pid;
  if (lock(fd, LOCK_SH | LOCK_NB)) {
    ::flock(fd, LOCK_UN); // free: this look must not hold it
  } else if (errno == EWOULDBLOCK) {
    std::string holder = holder_of(fd);
    pid = holder.substr(0, holder.find(':'));
  }
  ::close(fd);
  return pid;
}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::close(fd_); // closing the only descriptor releases the lock
  }
}

} // namespace kopt::util
