#pragma once

// A child process confined before it executes (Linux): Landlock lets it write only where it is
// told, and a seccomp filter refuses the system calls that reach outside it (its CPU and
// scheduling, other processes, new programs). kopt confines every harness it runs, because a
// candidate's code runs inside the harness from its first static constructor on.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace kopt::util {

/// What a confined child may do beyond reading files and running on its own.
struct Confinement {
  /// The folders (and everything beneath them) and files it may write, besides /dev (device
  /// files, /dev/null, /dev/shm). Each must exist when the child starts.
  std::vector<std::filesystem::path> writable;
  /// A profiler that starts the program itself (ncu, rocprofv3) needs new processes, /tmp and
  /// its own redirections; a harness run directly gets none of them.
  bool profiler = false;
  /// A GPU runtime starts here: CUDA names the threads it starts by writing
  /// /proc/<pid>/task/<tid>/comm, and its start fails (error 304) where it cannot, so the
  /// child's own /proc/<pid>/task is writable until the harness, once the runtime is up, takes
  /// /proc away again (harness::guard_memory).
  bool gpu_runtime = false;
};

/// A Confinement made ready in the parent before fork: the folders opened, the filter built.
/// apply() then runs in the child between fork and exec and calls nothing but the kernel.
class PreparedConfinement {
public:
  /// Prepares `confinement`: opens each writable path; throws Error naming one that cannot be
  /// opened.
  explicit PreparedConfinement(const Confinement &confinement);
  ~PreparedConfinement();
  PreparedConfinement(const PreparedConfinement &) = delete;
  PreparedConfinement &operator=(const PreparedConfinement &) = delete;

  /// In the child, just before execve(`path`, ...): sets no_new_privs, restricts its writes with
  /// Landlock (where the kernel has it) and installs the seccomp filter. `path` must be the
  /// pointer then passed to execve: only that call may execute a program. Returns 0, or the
  /// errno of the step that failed.
  int apply(const char *path) noexcept;

  /// One line for logs: "Landlock ABI 7, seccomp" or what this machine lacks.
  const std::string &summary() const { return summary_; }

  struct Filter; ///< the seccomp program, built in the parent (confine.cpp)

private:
  std::vector<int> writable_fds_;
  std::vector<bool> writable_dirs_;
  int landlock_abi_ = 0;
  bool profiler_ = false;
  bool gpu_runtime_ = false;
  std::unique_ptr<Filter> filter_;
  std::string summary_;
};

/// The version of Landlock this kernel offers (0: none), for messages and tests.
int landlock_abi();

} // namespace kopt::util
