#include "util/atomic_file.hpp"

#include "util/error.hpp"

#include <kopt/harness/atomic_file.hpp>
#include <kopt/harness/error.hpp>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kopt::util {

namespace fs = std::filesystem;

namespace {

enum class Fault { none, fail, torn, kill };

struct Injection {
  bool count = false;
  long step = 0; ///< 1-based; 0: none
  Fault fault = Fault::none;
};

Injection read_injection() {
  const char *env = std::getenv(kFaultInjectEnv);
  Injection injection;
  if (env == nullptr) {
    return injection;
  }
  std::string text = env;
  if (text == "count") {
    injection.count = true;
    return injection;
  }
  char *end = nullptr;
  long step = std::strtol(text.c_str(), &end, 10);
  std::string mode = end && *end == ':' ? std::string(end + 1) : "";
  Fault fault = mode == "fail"   ? Fault::fail
                : mode == "torn" ? Fault::torn
                : mode == "kill" ? Fault::kill
                                 : Fault::none;
  if (step > 0 && fault != Fault::none) {
    injection.step = step;
    injection.fault = fault;
  }
  return injection;
}

[[noreturn]] void injected_enospc(const fs::path &path) {
  throw Error(path.string() + ": cannot write: " + std::strerror(ENOSPC) + " (injected by " +
              kFaultInjectEnv + ")");
}

[[noreturn]] void injected_kill() {
  std::fflush(stderr);
  ::_exit(137);
}

// The fault to inject at this write step (none outside tests); counts and names the step. A
// `fail` throws here, before the step; the step injects the others itself.
Fault fault_at(const char *step, const fs::path &path) {
  static const Injection injection = read_injection();
  static std::atomic<long> steps{0};
  if (!injection.count && injection.step == 0) {
    return Fault::none;
  }
  long n = ++steps;
  if (injection.count) {
    std::fprintf(stderr, "kopt: write step %ld: %s %s\n", n, step, path.c_str());
  }
  Fault fault = n == injection.step ? injection.fault : Fault::none;
  if (fault == Fault::fail) {
    injected_enospc(path);
  }
  return fault;
}

// Ends a step that is done: a `kill` fault kills the process after it.
void after_step(Fault fault) {
  if (fault == Fault::kill) {
    injected_kill();
  }
}

// A write killed between its temp file and the rename: the temp file stays, half written.
[[noreturn]] void torn_write(const fs::path &path, std::string_view content) {
  std::string tmp = path.string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd >= 0) {
    (void)!::write(fd, content.data(), content.size() / 2);
  }
  injected_kill();
}

} // namespace

void write_file_atomic(const fs::path &path, std::string_view content) {
  Fault fault = fault_at("write", path);
  if (fault == Fault::torn) {
    torn_write(path, content);
  }
  try {
    harness::write_file_atomic(path.string(), content);
  } catch (const harness::Error &e) {
    throw Error(e.what());
  }
  after_step(fault);
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
  Fault fault = fault_at("append", path);
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
  if (fault == Fault::torn) {
    (void)!::write(fd, text.data(), text.size() / 2);
    injected_kill();
  }
  try {
    harness::write_all(fd, text, path.string());
    ::fsync(fd);
  } catch (const harness::Error &e) {
    ::close(fd);
    throw Error(e.what());
  }
  ::close(fd);
  after_step(fault);
}

void remove_file(const fs::path &path) {
  Fault fault = fault_at("remove", path);
  if (fault == Fault::torn) {
    injected_kill();
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw Error(path.string() + ": cannot remove: " + std::strerror(errno));
  }
  after_step(fault);
}

void remove_tree(const fs::path &path) {
  Fault fault = fault_at("remove", path);
  std::error_code ec;
  if (fault == Fault::torn) {
    fs::directory_iterator first(path, ec);
    if (!ec && first != fs::directory_iterator()) {
      fs::remove_all(first->path(), ec);
    }
    injected_kill();
  }
  fs::remove_all(path, ec);
  if (ec) {
    throw Error(path.string() + ": cannot remove: " + ec.message());
  }
  after_step(fault);
}

} // namespace kopt::util
