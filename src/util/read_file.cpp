#include "util/read_file.hpp"

#include "util/error.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kopt::util {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// What a file of `mode` is, as an error says it; "" for a regular file.
std::string what_it_is(mode_t mode) {
  const char *what = S_ISREG(mode)    ? nullptr
                     : S_ISDIR(mode)  ? "a directory"
                     : S_ISFIFO(mode) ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "of an unknown type";
  return what ? std::string("is ") + what + ", not a regular file" : "";
}

// Why `path` cannot be opened or stat'ed, given errno `e`: a dangling link and a link loop are
// named as such, anything else by its system message.
std::string why_not_found(const fs::path &path, int e) {
  struct stat link {};
  if (e == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    fs::path target = fs::read_symlink(path, ec);
    return "is a dangling link" + (ec ? std::string() : " to " + target.string());
  }
  if (e == ELOOP) {
    return "is a link loop";
  }
  return std::string("cannot read: ") + std::strerror(e);
}

// What kopt reads of each kind: its name in messages and the most it reads.
struct InputKind {
  Input kind;
  const char *name;
  std::size_t limit;
};

constexpr InputKind kInputs[] = {{Input::text, "a text file", 256 * kMiB},
                                 {Input::json, "a JSON file", 64 * kMiB},
                                 {Input::table, "a CSV table", 256 * kMiB},
                                 {Input::binary, "a binary", 4096 * kMiB}};

const InputKind &input_kind(Input kind) {
  for (const InputKind &k : kInputs) {
    if (k.kind == kind) {
      return k;
    }
  }
  return kInputs[0];
}

[[noreturn]] void too_large(const fs::path &path, Input kind) {
  throw Error(path.string() + ": larger than " + format_bytes(read_limit(kind)) +
              ", the most kopt reads from " + input_kind(kind).name);
}

} // namespace

std::size_t read_limit(Input kind) { return input_kind(kind).limit; }

std::string format_bytes(std::size_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) {
    return std::to_string(bytes / kMiB) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return std::to_string(bytes / 1024) + " KiB";
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::string why_not_regular(const fs::path &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return why_not_found(path, errno);
  }
  return what_it_is(st.st_mode);
}

std::string read_file(const fs::path &path, Input kind) {
  // stat first, so that a device is never opened; then open without blocking (a FIFO put
  // there in between opens at once) and check again on the descriptor.
  if (std::string why = why_not_regular(path); !why.empty()) {
    throw Error(path.string() + ": " + why);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    throw Error(path.string() + ": " + why_not_found(path, errno));
  }
  struct stat st {};
  std::string why = ::fstat(fd, &st) != 0 ? std::string("cannot read: ") + std::strerror(errno)
                                          : what_it_is(st.st_mode);
  if (!why.empty()) {
    ::close(fd);
    throw Error(path.string() + ": " + why);
  }
  const std::size_t limit = read_limit(kind);
  if (static_cast<std::size_t>(st.st_size) > limit) {
    ::close(fd);
    too_large(path, kind);
  }
  // The size stat gives is a hint only (a file in /proc says 0, a growing log grows): the read
  // itself stops one byte past the limit.
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size) + 1);
  std::size_t got = 0;
  while (true) {
    if (got == text.size()) {
      text.resize(std::min(limit + 1, std::max(text.size() * 2, std::size_t{65536})));
    }
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw Error(path.string() + ": cannot read: " + std::strerror(e));
    }
    if (n == 0) {
      break;
    }
    got += static_cast<std::size_t>(n);
    if (got > limit) {
      ::close(fd);
      too_large(path, kind);
    }
  }
  ::close(fd);
  text.resize(got);
  return text;
}

} // namespace kopt::util
