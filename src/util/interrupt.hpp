#pragma once

#include <stdexcept>
#include <string>
#include <sys/types.h>

namespace kopt::util {

/// Thrown when SIGINT or SIGTERM stopped the work in progress: `main` reports the step as
/// interrupted (never as a verdict) and exits 128 + the signal. Not a kopt::Error, so code that
/// turns errors into failed results lets it pass.
class Interrupted : public std::runtime_error {
public:
  Interrupted(int signal, const std::string &what);

  /// The signal that stopped the work: SIGINT or SIGTERM.
  int signal() const { return signal_; }

private:
  int signal_;
};

/// How long a child gets to end after kopt forwarded SIGINT or SIGTERM to it, before SIGKILL.
inline constexpr double kInterruptGraceSeconds = 2.0;

/// Installs kopt's SIGINT and SIGTERM handlers. While nothing is shielded (InterruptShield),
/// a signal ends kopt at once with exit status 128 + signal, after one line on stderr; inside
/// a shield it is forwarded to the process group of every running child (ChildGroup) and
/// remembered, and the shielded work ends with Interrupted.
void install_interrupt_handlers();

/// Returns the signal received (SIGINT or SIGTERM), or 0 when none was.
int interrupt_signal();

/// Returns "SIGINT", "SIGTERM" or "signal N".
std::string signal_name(int signal);

/// Throws Interrupted, saying `step` was interrupted, when a signal was received.
void throw_if_interrupted(const std::string &step);

/// Returns a descriptor that becomes readable when a signal arrives, for poll().
int interrupt_fd();

/// While one lives, a signal does not end kopt at once: a ledger update finishes its writes, a
/// running child is stopped and waited for (RealProcessRunner).
class InterruptShield {
public:
  InterruptShield();
  ~InterruptShield();
  InterruptShield(const InterruptShield &) = delete;
  InterruptShield &operator=(const InterruptShield &) = delete;
};

/// A running child's process group, which a signal is forwarded to while it is registered. A
/// signal that arrived before registration is forwarded at once.
class ChildGroup {
public:
  explicit ChildGroup(pid_t group);
  ~ChildGroup();
  ChildGroup(const ChildGroup &) = delete;
  ChildGroup &operator=(const ChildGroup &) = delete;

private:
  int slot_ = -1;
};

/// For tests: acts as if `signal` had arrived inside a shield (forwarding it, never exiting).
void simulate_interrupt(int signal);

/// For tests: forgets a received signal.
void reset_interrupt();

} // namespace kopt::util
