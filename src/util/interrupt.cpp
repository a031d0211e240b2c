#include "util/interrupt.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace kopt::util {

namespace {

// Everything here is touched by the signal handler: lock-free atomics and plain descriptors.
constexpr int kSlots = 64;
std::atomic<pid_t> groups[kSlots];
std::atomic<int> shields{0};
std::atomic<int> received{0};
std::atomic<int> wake_write{-1};
int wake_read = -1;

static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

void write_text(const char *text) { (void)!::write(2, text, std::strlen(text)); }

void on_signal(int signal, bool may_exit) {
  int expected = 0;
  received.compare_exchange_strong(expected, signal);
  if (may_exit && shields.load() == 0) {
    write_text(signal == SIGINT ? "kopt: interrupted by SIGINT\n"
                                : "kopt: interrupted by SIGTERM\n");
    ::_exit(128 + signal);
  }
  for (auto &group : groups) {
    pid_t pid = group.load();
    if (pid > 0) {
      ::kill(-pid, signal);
    }
  }
  int fd = wake_write.load();
  if (fd >= 0) {
    (void)!::write(fd, "!", 1);
  }
}

void handler(int signal) {
  int saved = errno;
  on_signal(signal, true);
  errno = saved;
}

} // namespace

Interrupted::Interrupted(int signal, const std::string &what)
    : std::runtime_error(what), signal_(signal) {}

int interrupt_fd() {
  if (wake_read < 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      return -1;
    }
    wake_read = fds[0];
    wake_write.store(fds[1]);
  }
  return wake_read;
}

void install_interrupt_handlers() {
  interrupt_fd();
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return received.load(); }

std::string signal_name(int signal) {
  if (signal == SIGINT) {
    return "SIGINT";
  }
  if (signal == SIGTERM) {
    return "SIGTERM";
  }
  return "signal " + std::to_string(signal);
}

void throw_if_interrupted(const std::string &step) {
  if (int signal = interrupt_signal()) {
    throw Interrupted(signal, step + ": interrupted by " + signal_name(signal));
  }
}

InterruptShield::InterruptShield() { shields.fetch_add(1); }

InterruptShield::~InterruptShield() { shields.fetch_sub(1); }

ChildGroup::ChildGroup(pid_t group) {
  for (int i = 0; i < kSlots; ++i) {
    pid_t empty = 0;
    if (groups[i].compare_exchange_strong(empty, group)) {
      slot_ = i;
      break;
    }
  }
  if (int signal = interrupt_signal()) {
    ::kill(-group, signal); // arrived between fork and registration
  }
}

ChildGroup::~ChildGroup() {
  if (slot_ >= 0) {
    groups[slot_].store(0);
  }
}

void simulate_interrupt(int signal) {
  interrupt_fd();
  on_signal(signal, false);
}

void reset_interrupt() {
  received.store(0);
  char drain[64];
  while (wake_read >= 0 && ::read(wake_read, drain, sizeof drain) > 0) {
  }
}

} // namespace kopt::util
