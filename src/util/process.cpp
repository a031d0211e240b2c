#include "util/process.hpp"

#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/read_file.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <iterator>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace kopt::util {

std::string ProcessResult::describe(double timeout_s) const {
  if (!started) {
    return "could not be started: " + err;
  }
  if (output_limit != 0) {
    return "stopped: its output passed " + format_bytes(output_limit) +
           ", the most kopt reads from a program";
  }
  if (timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %g s", timeout_s);
    return text;
  }
  if (signal != 0) {
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exited with " + std::to_string(exit_code);
}

namespace {

// The program's file name, for messages: "candidate_01" for .../bin/candidate_01.
std::string program_name(const Command &command) {
  return std::filesystem::path(command.argv.front()).filename().string();
}

std::vector<std::string> merged_environment(const std::map<std::string, std::string> &extra) {
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    std::string entry = *e;
    std::string key = entry.substr(0, entry.find('='));
    if (!extra.count(key)) {
      env.push_back(entry);
    }
  }
  for (const auto &[key, value] : extra) {
    env.push_back(key + "=" + value);
  }
  return env;
}

std::vector<char *> pointers(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (auto &s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Added to an errno that exec_child reports when the confinement failed (the pinning's are
// negative).
constexpr int kConfineFailed = 1 << 20;

// In the child: its own group (so a timeout kills its children too), stdout and stderr (and
// stdin, for a conversation) on the pipes, its CPU when it has one, then exec; a failure to pin,
// change folder or exec is written to `exec_fd` for the parent.
[[noreturn]] void exec_child(const Command &command, int in_fd, int out_fd, int err_fd, int exec_fd,
                             std::vector<char *> &argv, std::vector<char *> &envp, pid_t parent,
                             PreparedConfinement *confinement) {
  ::setpgid(0, 0);
  // A harness never outlives the kopt that started it: a SIGKILLed kopt cannot kill the group,
  // so the kernel does (the signal goes with exec). A parent gone before prctl is caught after.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != parent) {
    ::_exit(127);
  }
  if (in_fd >= 0) {
    ::dup2(in_fd, 0);
  }
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (command.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int e = EINVAL;
    if (command.cpu < CPU_SETSIZE) {
      CPU_SET(command.cpu, &set);
      e = ::sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
    }
    if (e != 0) {
      e = -e; // negative: the pinning failed, not the exec
      (void)!::write(exec_fd, &e, sizeof e);
      ::_exit(127);
    }
  }
  if (!command.cwd.empty() && ::chdir(command.cwd.c_str()) != 0) {
    int e = errno;
    (void)!::write(exec_fd, &e, sizeof e);
    ::_exit(127);
  }
  if (confinement) {
    // Last, so that kopt's own steps above (its CPU, its folder) are not the candidate's.
    if (int e = confinement->apply(argv[0]); e != 0) {
      e += kConfineFailed;
      (void)!::write(exec_fd, &e, sizeof e);
      ::_exit(127);
    }
  }
  if (confinement && !command.confinement->profiler) {
    ::execve(argv[0], argv.data(), envp.data()); // the one program the filter lets it execute
  } else {
    ::execvpe(argv[0], argv.data(), envp.data());
  }
  int e = errno;
  (void)!::write(exec_fd, &e, sizeof e);
  ::_exit(127);
}

// What the parent knows of a running child: its group, when it started and its time limit,
// when an interrupt arrived (the child then has kInterruptGraceSeconds to end) and whether its
// group was killed.
struct Watch {
  pid_t pid = -1;
  Clock::time_point start;
  double timeout_s = 0;
  std::optional<Clock::time_point> interrupted_at;
  bool killed = false;
  pollfd *interrupt_poll = nullptr; ///< the interrupt descriptor's poll entry, while polled
  /// Command::ends_at_exit: the program's pidfd (readable once it exited; -1 where the kernel has
  /// none: then waitid looks), and when it exited.
  bool ends_at_exit = false;
  int exit_fd = -1;
  std::optional<Clock::time_point> exited_at;

  void note_interrupt() {
    if (!interrupted_at && interrupt_signal() != 0) {
      interrupted_at = Clock::now();
      if (interrupt_poll) {
        interrupt_poll->fd = -1; // stays readable: poll it no more
      }
    }
  }

  void kill_group() {
    ::kill(-pid, SIGKILL);
    killed = true;
  }

  // With ends_at_exit: notes the program's exit (without reaping it) and returns the seconds of
  // the exit grace left, 0 once it is over; -1 before the exit or without ends_at_exit.
  double exit_grace_left() {
    if (!ends_at_exit) {
      return -1;
    }
    if (!exited_at) {
      pollfd p{exit_fd, POLLIN, 0};
      siginfo_t info{};
      bool gone = exit_fd >= 0 ? ::poll(&p, 1, 0) > 0
                               : ::waitid(P_PID, static_cast<id_t>(pid), &info,
                                          WEXITED | WNOHANG | WNOWAIT) == 0 &&
                                     info.si_pid == pid;
      if (!gone) {
        return -1;
      }
      exited_at = Clock::now();
    }
    return std::max(0.0, kExitGraceSeconds - seconds_since(*exited_at));
  }
};

// Reads the child's stdout and stderr (fds, closed and set to -1 as each ends) into `result`
// until both end, `done` says so (asked after each read), its time limit passes or an
// interrupt's grace runs out (then its group is killed).
void collect_output(Watch &w, int (&fds_io)[2], size_t max_output, ProcessResult &result,
                    const std::function<bool()> &done = {}) {
  // The third descriptor wakes the loop when a signal arrives: the child (which got it too)
  // then has kInterruptGraceSeconds to end before its group is killed; the fourth when the
  // program exits (ends_at_exit).
  pollfd fds[4] = {{fds_io[0], POLLIN, 0},
                   {fds_io[1], POLLIN, 0},
                   {interrupt_fd(), POLLIN, 0},
                   {w.ends_at_exit ? w.exit_fd : -1, POLLIN, 0}};
  w.interrupt_poll = &fds[2];
  std::string *sinks[2] = {&result.out, &result.err};
  char buffer[65536];
  bool stop = false;
  while (!stop && (fds[0].fd >= 0 || fds[1].fd >= 0)) {
    w.note_interrupt();
    double left = -1; // seconds until the next deadline, -1: none
    if (w.timeout_s > 0) {
      left = w.timeout_s - seconds_since(w.start);
      if (left <= 0) {
        result.timed_out = true;
        w.kill_group();
        break;
      }
    }
    if (w.interrupted_at) {
      double grace = kInterruptGraceSeconds - seconds_since(*w.interrupted_at);
      if (grace <= 0) {
        w.kill_group();
        break;
      }
      left = left < 0 ? grace : std::min(left, grace);
    }
    if (double exit_grace = w.exit_grace_left(); exit_grace == 0) {
      break; // the program exited: what it left running holds its output no longer
    } else if (exit_grace > 0 || (w.ends_at_exit && w.exit_fd < 0)) {
      exit_grace = exit_grace > 0 ? exit_grace : 0.01; // without a pidfd, look every 10 ms
      left = left < 0 ? exit_grace : std::min(left, exit_grace);
      fds[3].fd = -1;
    }
    int wait_ms = left < 0 ? -1 : static_cast<int>(left * 1000) + 1;
    int n = ::poll(fds, 4, wait_ms);
    if (n < 0 && errno != EINTR) {
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
        if (got > 0 && sinks[i]->size() + static_cast<size_t>(got) > max_output) {
          result.output_limit = max_output;
          w.kill_group();
          stop = true;
          break;
        } else if (got > 0) {
          sinks[i]->append(buffer, static_cast<size_t>(got));
          stop = done && done();
        } else if (got == 0 || errno != EINTR) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
        }
      }
    }
  }
  fds_io[0] = fds[0].fd;
  fds_io[1] = fds[1].fd;
  w.interrupt_poll = nullptr;
}

void close_exit_fd(Watch &w) {
  if (w.exit_fd >= 0) {
    ::close(w.exit_fd);
    w.exit_fd = -1;
  }
}

void close_all(int (&fds)[2]) {
  for (int &fd : fds) {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }
}

// Reaped by polling, so that a child which closed its output but runs on still meets its
// time limit and an interrupt's grace. Returns its wait status.
int reap(Watch &w, ProcessResult &result) {
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(w.pid, &status, WNOHANG);
    if (done == w.pid || (done < 0 && errno != EINTR)) {
      break;
    }
    w.note_interrupt();
    bool over_time = w.timeout_s > 0 && seconds_since(w.start) >= w.timeout_s;
    bool over_grace =
        w.interrupted_at && seconds_since(*w.interrupted_at) >= kInterruptGraceSeconds;
    if (!w.killed && (over_time || over_grace)) {
      result.timed_out = result.timed_out || (over_time && !w.interrupted_at);
      w.kill_group();
    }
    ::usleep(w.killed ? 1000 : 10000);
  }
  return status;
}

// The exit code or signal from a wait status; 127 for a child that never started.
void set_exit(ProcessResult &result, int status) {
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = -1;
  }
  if (!result.started) {
    result.exit_code = 127;
  }
}

// A started child: its group, its pipes (stdin's write end is -1 unless asked for) and what
// is known of it so far (an exec failure).
struct Spawned {
  pid_t pid = -1;
  std::unique_ptr<ChildGroup> group;
  int fds[2] = {-1, -1}; // stdout and stderr, read ends
  int in = -1;           // stdin, write end
  Clock::time_point start;
  ProcessResult result;
};

// Forks and executes `command` (a signal that came before is thrown as Interrupted instead); the
// caller holds an InterruptShield, so that a signal from here on is forwarded to the child.
Spawned spawn(const Command &command, bool with_stdin) {
  if (command.argv.empty()) {
    throw Error("internal: empty command");
  }
  throw_if_interrupted(program_name(command));
  int out_pipe[2];
  int err_pipe[2];
  int exec_pipe[2]; // reports an exec failure to the parent
  int in_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(exec_pipe, O_CLOEXEC) != 0 || (with_stdin && ::pipe2(in_pipe, O_CLOEXEC) != 0)) {
    throw Error(std::string("cannot create pipes: ") + std::strerror(errno));
  }
  std::vector<std::string> argv_strings = command.argv;
  std::vector<std::string> env_strings = merged_environment(command.env);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);
  Spawned child;
  std::optional<PreparedConfinement> confinement;
  if (command.confinement) {
    confinement.emplace(*command.confinement);
    child.result.confined = confinement->summary();
  }
  child.start = Clock::now();

  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    throw Error(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    exec_child(command, in_pipe[0], out_pipe[1], err_pipe[1], exec_pipe[1], argv, envp, parent,
               confinement ? &*confinement : nullptr);
  }
  ::setpgid(pid, pid);
  child.pid = pid;
  child.group = std::make_unique<ChildGroup>(pid);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  if (with_stdin) {
    ::close(in_pipe[0]);
    child.in = in_pipe[1];
  }
  child.fds[0] = out_pipe[0];
  child.fds[1] = err_pipe[0];

  int exec_errno = 0;
  if (::read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    child.result.started = false;
    if (exec_errno < 0) {
      child.result.err = std::string(command.argv[0]) + ": cannot run on CPU " +
                         std::to_string(command.cpu) + ": " + std::strerror(-exec_errno);
    } else if (exec_errno >= kConfineFailed) {
      child.result.err = std::string(command.argv[0]) + ": cannot be confined (" +
                         child.result.confined + "): " + std::strerror(exec_errno - kConfineFailed);
    } else {
      child.result.err = std::string(command.argv[0]) + ": " + std::strerror(exec_errno);
    }
  }
  ::close(exec_pipe[0]);
  return child;
}

// Reaps a child whose output ended (or was given up on) and fills in how it ended; throws
// Interrupted when a signal stopped it.
ProcessResult end_child(Spawned &child, Watch &watch, const Command &command) {
  close_all(child.fds);
  int status = reap(watch, child.result);
  watch.note_interrupt();
  if (child.result.timed_out || child.result.output_limit != 0 || watch.interrupted_at) {
    ::kill(-child.pid, SIGKILL); // any grandchildren still holding on
  }
  if (watch.interrupted_at) {
    throw Interrupted(interrupt_signal(), program_name(command) + " was stopped: interrupted by " +
                                              signal_name(interrupt_signal()));
  }
  child.result.seconds =
      std::chrono::duration<double>(watch.exited_at.value_or(Clock::now()) - child.start).count();
  set_exit(child.result, status);
  return child.result;
}

// Writes all of `text` to `fd`; false when the reader is gone (EPIPE, with SIGPIPE held back
// from this thread so that it does not end kopt).
bool write_all(int fd, const std::string &text) {
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  size_t done = 0;
  bool ok = true;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (!ok) {
    timespec none{0, 0};
    ::sigtimedwait(&pipe_signal, nullptr, &none); // the SIGPIPE that write raised, if pending
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

class RealConversation : public Conversation {
public:
  explicit RealConversation(const Command &command)
      : command_(command), child_(spawn(command, true)) {
    watch_.pid = child_.pid;
    watch_.start = child_.start;
  }

  ~RealConversation() override {
    if (!finished_) {
      ::kill(-child_.pid, SIGKILL);
      close_input();
      close_all(child_.fds);
      int status = 0;
      while (::waitpid(child_.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }

  bool ask(const std::string &line, const std::string &reply, double timeout_s) override {
    if (finished_ || child_.in < 0 || !child_.result.started) {
      return false;
    }
    size_t from = child_.result.out.size();
    if (!write_all(child_.in, line + "\n")) {
      ::close(child_.in);
      child_.in = -1;
      return false;
    }
    // A line of stdout starting with `reply`, wholly written after `from`.
    auto answered = [&] {
      const std::string &out = child_.result.out;
      for (size_t at = from; at < out.size();) {
        size_t end = out.find('\n', at);
        if (end == std::string::npos) {
          return false;
        }
        if (out.compare(at, reply.size(), reply) == 0 && (at == 0 || out[at - 1] == '\n')) {
          return true;
        }
        at = end + 1;
      }
      return false;
    };
    watch_.start = Clock::now();
    watch_.timeout_s = timeout_s;
    collect_output(watch_, child_.fds, command_.max_output, child_.result, answered);
    watch_.note_interrupt();
    if (watch_.interrupted_at) {
      finish(0); // throws Interrupted
    }
    return answered();
  }

  void hold(bool stopped) override {
    if (!finished_ && stopped != held_) {
      ::kill(-child_.pid, stopped ? SIGSTOP : SIGCONT);
      held_ = stopped;
    }
  }

  void close_input() override {
    hold(false); // a stopped child cannot see its input end
    if (child_.in >= 0) {
      ::close(child_.in);
      child_.in = -1;
    }
  }

  ProcessResult finish(double timeout_s) override {
    if (finished_) {
      return child_.result;
    }
    close_input();
    if (!child_.result.timed_out && child_.result.output_limit == 0) {
      watch_.start = Clock::now();
      watch_.timeout_s = timeout_s;
      collect_output(watch_, child_.fds, command_.max_output, child_.result);
    }
    finished_ = true;
    return end_child(child_, watch_, command_);
  }

private:
  Command command_;
  InterruptShield shield_; // a signal stops the child, then the conversation (Interrupted)
  Spawned child_;
  Watch watch_;
  bool finished_ = false;
  bool held_ = false;
};

} // namespace

std::unique_ptr<Conversation> ProcessRunner::start(const Command &command) {
  throw Error("internal: this process runner cannot hold a conversation with " +
              (command.argv.empty() ? std::string("an empty command") : program_name(command)));
}

std::unique_ptr<Conversation> RealProcessRunner::start(const Command &command) {
  return std::make_unique<RealConversation>(command);
}

ProcessResult RealProcessRunner::run(const Command &command) {
  // From here a signal is forwarded to the child instead of ending kopt at once.
  InterruptShield shield;
  if (command.ends_at_exit) {
    become_subreaper(); // what the program leaves running comes to kopt when it exits
  }
  Spawned child = spawn(command, false);
  Watch watch;
  watch.pid = child.pid;
  watch.start = child.start;
  watch.timeout_s = command.timeout_s;
  watch.ends_at_exit = command.ends_at_exit;
  if (command.ends_at_exit) {
    watch.exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, child.pid, 0));
  }
  try {
    collect_output(watch, child.fds, command.max_output, child.result);
    ProcessResult result = end_child(child, watch, command);
    if (command.ends_at_exit) {
      kill_children(&result.left_running);
    }
    close_exit_fd(watch);
    return result;
  } catch (...) {
    if (command.ends_at_exit) {
      kill_children();
    }
    close_exit_fd(watch);
    throw;
  }
}

std::vector<ProcessResult> ProcessRunner::run_all(const std::vector<Command> &commands,
                                                  unsigned /*jobs*/) {
  std::vector<ProcessResult> results;
  for (const auto &command : commands) {
    results.push_back(run(command));
  }
  return results;
}

std::vector<ProcessResult> RealProcessRunner::run_all(const std::vector<Command> &commands,
                                                      unsigned jobs) {
  // run() is safe on threads: its pipes are close-on-exec from birth, and the interrupt
  // registry is lock-free. Each thread takes the next command until none is left.
  std::vector<ProcessResult> results(commands.size());
  std::vector<std::exception_ptr> errors(commands.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < commands.size(); i = next++) {
      try {
        results[i] = run(commands[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  unsigned threads = jobs != 0 ? jobs : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, commands.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    pool.emplace_back(work);
  }
  work();
  for (auto &thread : pool) {
    thread.join();
  }
  for (const auto &error : errors) {
    if (error) {
      std::rethrow_exception(error);
    }
  }
  return results;
}

int current_cpu() { return ::sched_getcpu(); }

std::string find_program(const std::string &program) {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : "";
  }
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    std::string dir =
        dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return "";
}

} // namespace kopt::util
