#include "util/atomic_file.hpp"

#include "util/error.hpp"

#include <kopt/harness/atomic_file.hpp>
#include <kopt/harness/error.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kopt::util {

namespace fs = std::filesystem;

void write_file_atomic(const fs::path &path, std::string_view content) {
  try {
    harness::write_file_atomic(path.string(), content);
  } catch (const harness::Error &e) {
    throw Error(e.what());
  }
}

bool write_file_if_changed(const fs::path &path, std::string_view content) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == content.size() &&
      read_file(path) == content) {
    return false;
  }
  write_file_atomic(path, content);
  return true;
}

void append_line(const fs::path &path, std::string_view line) {
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path());
  }
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error(path.string() + ": cannot open for append: " + std::strerror(errno));
  }
  // A last line cut short (a write killed mid-way) would swallow this one: start on a new line.
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
      text += '\n';
    }
  }
  text += line;
  text += '\n';
  try {
    harness::write_all(fd, text, path.string());
    ::fsync(fd);
  } catch (const harness::Error &e) {
    ::close(fd);
    throw Error(e.what());
  }
  ::close(fd);
}

} // namespace kopt::util
