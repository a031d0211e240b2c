#include "util/process.hpp"

#include <doctest/doctest.h>

#include <sched.h>
#include <string>

using kopt::util::Command;
using kopt::util::ProcessResult;
using kopt::util::RealProcessRunner;

namespace {

// The CPUs this process may run on.
cpu_set_t allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
  return set;
}

// The highest CPU this process may run on: a child pinned there must see it as its only one.
int last_allowed_cpu() {
  cpu_set_t set = allowed_cpus();
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      last = cpu;
    }
  }
  return last;
}

} // namespace

TEST_SUITE_BEGIN("util::process");

TEST_CASE("a command given a CPU runs on that CPU alone") {
  int cpu = last_allowed_cpu();
  REQUIRE(cpu >= 0);
  Command command{{"sh", "-c", "grep '^Cpus_allowed_list' /proc/self/status"}, {}, {}, 30};
  command.cpu = cpu;
  ProcessResult result = RealProcessRunner().run(command);
  REQUIRE(result.ok());
  CHECK(result.out == "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");

  // Without one, the child keeps every CPU the parent may use.
  command.cpu = -1;
  result = RealProcessRunner().run(command);
  REQUIRE(result.ok());
  CHECK(result.out.find("Cpus_allowed_list:\t") == 0);
  if (cpu > 0) {
    CHECK(result.out != "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
  }
}

TEST_CASE("a CPU the child may not run on: not started, and the message names the CPU") {
  for (int cpu : {CPU_SETSIZE + 3, 1000}) {
    if (cpu == 1000 && last_allowed_cpu() >= 1000) {
      continue;
    }
    Command command{{"true"}, {}, {}, 30};
    command.cpu = cpu;
    ProcessResult result = RealProcessRunner().run(command);
    CHECK_FALSE(result.started);
    CHECK(result.describe(30) == "could not be started: true: cannot run on CPU " +
                                     std::to_string(cpu) + ": Invalid argument");
  }
}

TEST_CASE("current_cpu is one of the CPUs this process may run on") {
  int cpu = kopt::util::current_cpu();
  REQUIRE(cpu >= 0);
  cpu_set_t set = allowed_cpus();
  CHECK(CPU_ISSET(cpu, &set));
}

TEST_CASE("a process a child leaves behind, in a session of its own, is found and killed") {
  kopt::util::become_subreaper();
  RealProcessRunner runner;
  ProcessResult result =
      runner.run(Command{{"sh", "-c", "(setsid sleep 30 >/dev/null 2>&1 &); exit 0"}, {}, {}, 10});
  REQUIRE(result.ok());
  CHECK(kopt::util::kill_children() == 1);
  CHECK(kopt::util::kill_children() == 0);
}

TEST_SUITE_END();
