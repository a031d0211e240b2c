#include "guard_proc.hpp"

#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kopt::harness::detail {

// Takes /proc away from the process's writes for good (a Landlock layer over whatever kopt set:
// every folder of / but /proc stays as writable as it was). A GPU runtime writes its threads'
// names under /proc/<pid>/task while it starts, which kopt allowed until now; /proc/self/mem and
// /proc/<pid>/task/<tid>/mem would write past any page protection. Returns "" or why not.
const char *close_proc() {
  constexpr long kCreate = 444, kAdd = 445, kRestrict = 446;
  long abi = ::syscall(kCreate, nullptr, 0, 1);
  if (abi <= 0) {
    return ""; // no Landlock: nothing was confined, and kopt's log says so
  }
  // Write file, remove, make (char, dir, reg, sock, fifo, block, sym); refer (2), truncate (3).
  std::uint64_t rights = (1ULL << 1) | (0x1ffULL << 4);
  rights |= abi >= 2 ? (1ULL << 13) : 0;
  rights |= abi >= 3 ? (1ULL << 14) : 0;
  std::uint64_t handled = rights;
  long ruleset = ::syscall(kCreate, &handled, sizeof handled, 0);
  if (ruleset < 0 || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return "cannot make a Landlock ruleset";
  }
  DIR *root = ::opendir("/");
  while (const dirent *entry = root ? ::readdir(root) : nullptr) {
    if (entry->d_name[0] == '.' || std::strcmp(entry->d_name, "proc") == 0) {
      continue;
    }
    char path[512] = "/";
    std::strncat(path, entry->d_name, sizeof path - 2);
    int fd = ::open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    struct __attribute__((packed)) {
      std::uint64_t allowed;
      std::int32_t parent;
    } rule{rights, fd};
    struct stat st {};
    if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
      rule.allowed = (1ULL << 1) | (abi >= 3 ? (1ULL << 14) : 0);
    }
    ::syscall(kAdd, ruleset, 1, &rule, 0);
    ::close(fd);
  }
  if (root) {
    ::closedir(root);
  }
  long done = ::syscall(kRestrict, ruleset, 0);
  ::close(static_cast<int>(ruleset));
  return done == 0 ? "" : "cannot restrict its writes (Landlock)";
}

// Whether the process holds a descriptor of a /proc mem file (opened before /proc was closed).
bool holds_proc_mem(const char **which) {
  static char link[512];
  DIR *fds = ::opendir("/proc/self/fd");
  bool found = false;
  while (const dirent *entry = fds ? ::readdir(fds) : nullptr) {
    char path[64] = "/proc/self/fd/";
    std::strncat(path, entry->d_name, sizeof path - 16);
    ssize_t n = ::readlink(path, link, sizeof link - 1);
    if (n <= 0) {
      continue;
    }
    link[n] = '\0';
    const std::size_t length = static_cast<std::size_t>(n);
    if (std::strncmp(link, "/proc/", 6) == 0 && length > 4 &&
        std::strcmp(link + length - 4, "/mem") == 0) {
      *which = link;
      found = true;
      break;
    }
  }
  if (fds) {
    ::closedir(fds);
  }
  return found;
}

} // namespace kopt::harness::detail
