#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/confine.hpp"

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
  /// The run ends when the program itself exits, not when its output closes: output that what it
  /// started holds open is read for kExitGraceSeconds more, then left. kopt is made their reaper
  /// (become_subreaper) and every child of kopt still running then is killed and named in
  /// ProcessResult::left_running, so kopt runs nothing else meanwhile (run(), not run_all()).
  bool ends_at_exit = false;
  /// Set: the child runs confined (util/confine.hpp) from before its exec on. argv[0] must then
  /// be a path, which is executed as it is (no PATH search).
  std::optional<Confinement> confinement;
};

/// With Command::ends_at_exit: how long output held open after the program exited is still read.
inline constexpr double kExitGraceSeconds = 0.2;

/// What a finished child did: exit status or signal, whether it ran out of time, its output.
struct ProcessResult {
  int exit_code = -1;           ///< -1 when killed by a signal
  int signal = 0;               ///< the terminating signal, 0 when it exited
  bool timed_out = false;       ///< killed by kopt because it ran past Command::timeout_s
  bool started = true;          ///< false when the program could not be executed at all
  std::size_t output_limit = 0; ///< nonzero: killed by kopt, its output passed this many bytes
  std::string out;              ///< standard output
  std::string err;              ///< standard error
  double seconds = 0;           ///< wall time (to the program's exit, with ends_at_exit)
  /// With Command::confinement: how the child was confined ("Landlock ABI 7, seccomp").
  std::string confined;
  /// With Command::ends_at_exit: what the program left running, killed ("1234 (sleep)").
  std::vector<std::string> left_running;

  /// True when the child exited with status 0 and kopt did not stop it (a time limit or the
  /// output limit ends its group even when the program itself had exited).
  bool ok() const { return exit_code == 0 && !timed_out && output_limit == 0; }

  /// One line for the user: "exited with 3", "killed by signal 6 (Aborted)", "timed out
  /// after 5 s", "stopped: its output passed 256 MiB, the most kopt reads from a program",
  /// "could not be started: ...".
  std::string describe(double timeout_s) const;
};

/// A child that kopt talks to while it runs (ProcessRunner::start): lines to its stdin, and its
/// stdout read up to the line that answers each. Its stdout and stderr add up over the whole
/// conversation, as run() would return them. Destroyed before finish(), it kills the child's
/// group and reaps it.
class Conversation {
public:
  virtual ~Conversation() = default;

  /// Writes `line` and a newline to the child's stdin, then reads its output until its stdout
  /// holds a line starting with `reply` that it had not read before this call; returns true then.
  /// Returns false when the child ended first (it closed its output, or its stdin), or when
  /// `timeout_s` passed (0: no limit; its group is then killed, and finish() says it timed out).
  /// Throws util::Interrupted when a signal stopped it, as run() does.
  virtual bool ask(const std::string &line, const std::string &reply, double timeout_s) = 0;

  /// Stops the child's whole group (SIGSTOP) with `stopped`, or lets it go on (SIGCONT): a
  /// side served by a process of its own runs nothing while the other side is measured.
  /// The base does nothing (a fake's child never runs).
  virtual void hold(bool stopped) { (void)stopped; }

  /// Closes the child's stdin, so that a child serving until its input ends begins to exit while
  /// kopt ends another; finish() does it too.
  virtual void close_input() = 0;

  /// Closes the child's stdin, reads its output until it exits (at most `timeout_s`, then its
  /// group is killed), and returns what it did over the whole conversation.
  virtual ProcessResult finish(double timeout_s) = 0;
};

/// Runs child processes; tests substitute a fake that returns scripted results.
class ProcessRunner {
public:
  virtual ~ProcessRunner() = default;

  /// Starts `command` with its stdin on a pipe kopt writes to, for a conversation (its
  /// timeout_s is left to each ask and to finish). The base runner holds none: it throws Error.
  virtual std::unique_ptr<Conversation> start(const Command &command);

  /// Runs `command` to completion (or its time limit) and returns what happened. A child that
  /// times out is killed with its whole process group. The real runner puts each child in a
  /// group of its own and forwards SIGINT / SIGTERM to it (util/interrupt.hpp): the child gets
  /// two seconds to end before SIGKILL, then run() throws util::Interrupted.
  virtual ProcessResult run(const Command &command) = 0;

  /// Runs every command of `commands` and returns their results in the same order. The base
  /// runner runs them one after another through run(), so a fake's script stays in order; the
  /// real one runs up to `jobs` at once (0: one per CPU). The first error or interrupt is thrown
  /// once every command has ended.
  virtual std::vector<ProcessResult> run_all(const std::vector<Command> &commands, unsigned jobs);
};

/// The ProcessRunner that forks and executes real programs.
class RealProcessRunner : public ProcessRunner {
public:
  ProcessResult run(const Command &command) override;
  std::vector<ProcessResult> run_all(const std::vector<Command> &commands, unsigned jobs) override;
  std::unique_ptr<Conversation> start(const Command &command) override;
};

/// Makes this process the reaper of its orphaned descendants (Linux's PR_SET_CHILD_SUBREAPER): a
/// process that a child leaves running when it exits, even in a session of its own, becomes this
/// process's child, where kill_children() finds it.
void become_subreaper();

/// Kills (SIGKILL) and reaps every child of this process that is still running, and what they
/// leave in turn; returns how many there were, and adds each to `killed` ("1234 (sleep)").
int kill_children(std::vector<std::string> *killed = nullptr);

/// Returns the CPU the calling thread runs on now, or -1 when the system does not say.
int current_cpu();

/// Returns the full path of `program` found on PATH, or "" when it is not there.
std::string find_program(const std::string &program);

} // namespace kopt::util
