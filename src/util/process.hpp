#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::util {

/// One child process to run: its argv, extra environment, working folder and time limit.
struct Command {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env; ///< added to (or replacing in) the parent's env
  std::filesystem::path cwd;              ///< empty: the parent's
  double timeout_s = 0;                   ///< 0: no limit
  int cpu = -1;                           ///< >= 0: the child runs on this CPU alone
  /// The most bytes kept of its stdout, and of its stderr: a tool whose output never ends is
  /// killed with its group past it, instead of growing kopt to the memory limit.
  std::size_t max_output = std::size_t{256} << 20;
};

/// What a finished child did: exit status or signal, whether it ran out of time, its output.
struct ProcessResult {
  int exit_code = -1;           ///< -1 when killed by a signal
  int signal = 0;               ///< the terminating signal, 0 when it exited
  bool timed_out = false;       ///< killed by kopt because it ran past Command::timeout_s
  bool started = true;          ///< false when the program could not be executed at all
  std::size_t output_limit = 0; ///< nonzero: killed by kopt, its output passed this many bytes
  std::string out;              ///< standard output
  std::string err;              ///< standard error
  double seconds = 0;           ///< wall time

  /// True when the child exited with status 0.
  bool ok() const { return exit_code == 0; }

  /// One line for the user: "exited with 3", "killed by signal 6 (Aborted)", "timed out
  /// after 5 s", "stopped: its output passed 256 MiB, the most kopt reads from a program",
  /// "could not be started: ...".
  std::string describe(double timeout_s) const;
};

/// Runs child processes; tests substitute a fake that returns scripted results.
class ProcessRunner {
public:
  virtual ~ProcessRunner() = default;

  /// Runs `command` to completion (or its time limit) and returns what happened. A child that
  /// times out is killed with its whole process group. The real runner puts each child in a
  /// group of its own and forwards SIGINT / SIGTERM to it (util/interrupt.hpp): the child gets
  /// two seconds to end before SIGKILL, then run() throws util::Interrupted.
  virtual ProcessResult run(const Command &command) = 0;
};

/// The ProcessRunner that forks and executes real programs.
class RealProcessRunner : public ProcessRunner {
public:
  ProcessResult run(const Command &command) override;
};

/// Makes this process the reaper of its orphaned descendants (Linux's PR_SET_CHILD_SUBREAPER): a
/// process that a child leaves running when it exits, even in a session of its own, becomes this
/// process's child, where kill_children() finds it.
void become_subreaper();

/// Kills (SIGKILL) and reaps every child of this process that is still running, and what they
/// leave in turn; returns how many there were.
int kill_children();

/// Returns the CPU the calling thread runs on now, or -1 when the system does not say.
int current_cpu();

/// Returns the full path of `program` found on PATH, or "" when it is not there.
std::string find_program(const std::string &program);

} // namespace kopt::util
