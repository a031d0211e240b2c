#include "util/interrupt.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

using kopt::util::Command;
using kopt::util::Interrupted;
using kopt::util::RealProcessRunner;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Runs `script` under sh, sends `signal` (as the handler would) after 300 ms, and returns the
// seconds until run() ended; `what` gets Interrupted's text.
double interrupt_run(const std::string &script, int signal, std::string &what, int &got) {
  RealProcessRunner runner;
  Command command{{"sh", "-c", script}, {}, {}, 60};
  std::thread sender([signal] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kopt::util::simulate_interrupt(signal);
  });
  auto start = std::chrono::steady_clock::now();
  try {
    runner.run(command);
  } catch (const Interrupted &e) {
    what = e.what();
    got = e.signal();
  }
  double took = seconds_since(start);
  sender.join();
  kopt::util::reset_interrupt();
  return took;
}

// True while the process whose pid `pid_file` holds runs (a zombie has ended).
bool alive(const std::string &pid_file) {
  std::string pid(kopt::util::trim(kopt::util::read_file(pid_file)));
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) {
    return false;
  }
  size_t close = line.rfind(')'); // the state follows the command name in parentheses
  return close == std::string::npos || line.substr(close + 2, 1) != "Z";
}

// True when the process of `pid_file` ends within a second: a SIGKILL to a group is delivered
// at once, but a grandchild that nobody waits for still takes a moment to die.
bool dies(const std::string &pid_file) {
  for (int i = 0; i < 100 && alive(pid_file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !alive(pid_file);
}

} // namespace

TEST_SUITE_BEGIN("util::interrupt");

TEST_CASE("a child that ends on the forwarded signal ends the run at once, as interrupted") {
  kopt::test::TempDir dir;
  std::string pid = (dir.path() / "pid").string();
  std::string what;
  int got = 0;
  double took = interrupt_run("echo $$ > " + pid + "; exec sleep 30", SIGINT, what, got);
  CHECK(took < 1.5);
  CHECK(got == SIGINT);
  CHECK(what == "sh was stopped: interrupted by SIGINT");
  CHECK_FALSE(alive(pid));
}

TEST_CASE("a child that ignores the signal is killed, with its group, after the grace") {
  kopt::test::TempDir dir;
  std::string pid = (dir.path() / "pid").string();
  std::string grandchild = (dir.path() / "grandchild").string();
  std::string what;
  int got = 0;
  double took = interrupt_run("trap '' TERM; sleep 30 & echo $! > " + grandchild + "; echo $$ > " +
                                  pid + "; wait",
                              SIGTERM, what, got);
  CHECK(took >= kopt::util::kInterruptGraceSeconds);
  CHECK(took < kopt::util::kInterruptGraceSeconds + 1.5);
  CHECK(got == SIGTERM);
  CHECK(what == "sh was stopped: interrupted by SIGTERM");
  CHECK_FALSE(alive(pid));
  CHECK(dies(grandchild));
}

TEST_CASE("after a signal no new child is started") {
  kopt::test::TempDir dir;
  auto marker = dir.path() / "started";
  kopt::util::simulate_interrupt(SIGINT);
  RealProcessRunner runner;
  CHECK_THROWS_AS(runner.run({{"touch", marker.string()}, {}, {}, 0}), Interrupted);
  kopt::util::reset_interrupt();
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK(runner.run({{"touch", marker.string()}, {}, {}, 0}).ok());
}

TEST_CASE("signal names") {
  CHECK(kopt::util::signal_name(SIGINT) == "SIGINT");
  CHECK(kopt::util::signal_name(SIGTERM) == "SIGTERM");
  CHECK(kopt::util::signal_name(SIGHUP) == "signal 1");
}

TEST_SUITE_END();
