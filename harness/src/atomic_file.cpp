#include "kopt/harness/atomic_file.hpp"

#include "kopt/harness/error.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace kopt::harness {

void write_all(int fd, std::string_view content, const std::string &path) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw Error(path + ": cannot write: " + std::strerror(errno));
    }
    content.remove_prefix(static_cast<std::size_t>(n));
  }
}

void write_file_atomic(const std::string &path, std::string_view content) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent);
  }
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    throw Error(path + ": cannot create temporary file: " + std::strerror(errno));
  }
  try {
    write_all(fd, content, path);
    if (::fsync(fd) != 0 || ::fchmod(fd, 0644) != 0) {
      throw Error(path + ": cannot sync: " + std::strerror(errno));
    }
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot rename into place: " + std::strerror(err));
  }
}

} // namespace kopt::harness
