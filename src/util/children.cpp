#include "util/process.hpp"

#include "util/error.hpp"
#include "util/read_file.hpp"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

// What kopt's children leave behind: kopt made their reaper, and the kill of what is left.
namespace kopt::util {

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

namespace {

// A /proc file's text, "" when it cannot be read: its process may end at any moment, and then
// the read fails (ESRCH).
std::string read_proc_file(const std::filesystem::path &path) {
  try {
    return read_file(path);
  } catch (const Error &) {
    return "";
  }
}

} // namespace

int kill_children(std::vector<std::string> *named) {
  int killed = 0;
  // A killed child's own orphans come to this process next: look again until none are left.
  for (int pass = 0; pass < 16; ++pass) {
    std::vector<std::pair<pid_t, std::string>> children;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      const std::string text = read_proc_file(entry.path() / "stat");
      // pid (comm) state ppid ...: the command may hold spaces and parentheses, so the fields
      // are read after its last ')'.
      size_t close = text.rfind(')');
      char state = 0;
      long ppid = 0;
      if (close != std::string::npos &&
          std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 &&
          ppid == ::getpid()) {
        size_t open = text.find('(');
        std::string comm = open < close ? text.substr(open, close + 1 - open) : "";
        // A zombie (a process that ended, not waited for) ran nothing on: reaped, not named.
        children.emplace_back(static_cast<pid_t>(std::stol(name)),
                              state == 'Z' ? "" : name + " " + comm);
      }
    }
    if (children.empty()) {
      break;
    }
    for (const auto &[child, description] : children) {
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
      if (description.empty()) {
        continue;
      }
      ++killed;
      if (named) {
        named->push_back(description);
      }
    }
  }
  return killed;
}

} // namespace kopt::util
