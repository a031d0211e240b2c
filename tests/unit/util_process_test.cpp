#include "util/process.hpp"

#include <doctest/doctest.h>

#include "temp_dir.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sched.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using kopt::test::TempDir;
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

// Whether `pid` has ended: gone, or a zombie left for whoever reaps it (this process when it
// is a subreaper: then it is reaped here).
bool has_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::size_t close = text.rfind(')');
  if (!stat || close == std::string::npos || close + 2 >= text.size()) {
    return true;
  }
  if (text[close + 2] == 'Z') {
    ::waitpid(pid, nullptr, WNOHANG);
    return true;
  }
  return false;
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

TEST_CASE("kill_children survives processes of others ending while it reads /proc") {
  // Three processes (not the reader's children) start and end short-lived processes all the
  // time; a /proc/<pid>/stat opened just before its process ends fails its read with ESRCH,
  // which a stream throws. The reader, a forked child, runs kill_children for two seconds.
  std::vector<pid_t> spawners;
  for (int i = 0; i < 3; ++i) {
    pid_t spawner = ::fork();
    REQUIRE(spawner >= 0);
    if (spawner == 0) {
      for (;;) {
        pid_t brief = ::fork();
        if (brief == 0) {
          ::usleep(200);
          ::_exit(0);
        }
        ::waitpid(brief, nullptr, 0);
      }
    }
    spawners.push_back(spawner);
  }
  pid_t reader = ::fork();
  REQUIRE(reader >= 0);
  if (reader == 0) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    try {
      while (std::chrono::steady_clock::now() < end) {
        kopt::util::kill_children();
      }
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = -1;
  ::waitpid(reader, &status, 0);
  for (pid_t spawner : spawners) {
    ::kill(spawner, SIGKILL);
    ::waitpid(spawner, nullptr, 0);
  }
  // The spawners' last brief processes come to this process (a subreaper): reap them.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("ends_at_exit: the run ends with the program; what it left is killed and named") {
  // The sleep, in a session of its own, holds the program's stdout open: without ends_at_exit
  // the run lasts until its time limit, and is not ok although the program exited 0.
  std::string script = "echo before; (setsid sleep 30 &); exit 0";
  RealProcessRunner runner;
  Command held{{"sh", "-c", script}, {}, {}, 1};
  kopt::util::become_subreaper();
  ProcessResult waited = runner.run(held);
  CHECK(waited.timed_out);
  CHECK_FALSE(waited.ok());
  CHECK(kopt::util::kill_children() == 1);

  Command ends = held;
  ends.timeout_s = 20;
  ends.ends_at_exit = true;
  auto start = std::chrono::steady_clock::now();
  ProcessResult r = runner.run(ends);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.ok());
  CHECK(r.out == "before\n");
  CHECK(took < 10);
  CHECK(r.seconds < took);
  REQUIRE(r.left_running.size() == 1);
  CHECK(r.left_running[0].find("(sleep)") != std::string::npos);
  CHECK(kopt::util::kill_children() == 0); // the run killed it
}

TEST_CASE("a command's process dies with the process that ran it, even a SIGKILLed one") {
  TempDir dir;
  const std::string pid_file = (dir.path() / "pid").string();
  pid_t runner_pid = ::fork();
  REQUIRE(runner_pid >= 0);
  if (runner_pid == 0) { // kopt's part: runs a long command and is killed while it waits
    RealProcessRunner runner;
    runner.run(Command{{"sh", "-c", "echo $$ > '" + pid_file + "'; exec sleep 30"}, {}, {}, 60});
    ::_exit(0);
  }
  pid_t child = 0;
  for (int i = 0; i < 500 && child == 0; ++i) {
    std::ifstream in(pid_file);
    if (!(in >> child)) {
      child = 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  REQUIRE(child > 0);
  REQUIRE_FALSE(has_ended(child));
  ::kill(runner_pid, SIGKILL);
  ::waitpid(runner_pid, nullptr, 0);
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    ended = has_ended(child);
    if (!ended) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (!ended) {
    ::kill(child, SIGKILL);
  }
  CHECK(ended);
}

TEST_SUITE_END();

TEST_CASE("a conversation: each line answered in turn, the output of all of it kept") {
  RealProcessRunner runner;
  auto talk = runner.start(Command{
      {"sh", "-c",
       "echo hello; while read line; do echo \"work on $line\" >&2; echo \"done $line\"; done; "
       "echo bye; exit 3"}});
  CHECK(talk->ask("one", "done one", 10));
  CHECK(talk->ask("two", "done", 10));
  talk->close_input();
  ProcessResult result = talk->finish(10);
  CHECK(result.exit_code == 3);
  CHECK(result.out == "hello\ndone one\ndone two\nbye\n");
  CHECK(result.err == "work on one\nwork on two\n");
}

TEST_CASE("a conversation whose child ends, or answers too late, gets no answer") {
  RealProcessRunner runner;
  SUBCASE("the child ends without answering") {
    auto talk = runner.start(Command{{"sh", "-c", "read line; echo \"not $line\"; exit 1"}});
    CHECK_FALSE(talk->ask("x", "done", 10));
    CHECK_FALSE(talk->ask("y", "done", 10)); // its stdin is closed: no crash on the write
    ProcessResult result = talk->finish(10);
    CHECK(result.exit_code == 1);
    CHECK(result.out == "not x\n");
  }
  SUBCASE("an answer that would come after the time limit: the child is killed") {
    auto talk = runner.start(Command{{"sh", "-c", "read line; sleep 30; echo done"}});
    auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(talk->ask("x", "done", 0.3));
    ProcessResult result = talk->finish(10);
    CHECK(result.timed_out);
    const bool quick = std::chrono::steady_clock::now() - start < std::chrono::seconds(10);
    CHECK(quick);
  }
  SUBCASE("a reply line must begin a line of stdout") {
    auto talk = runner.start(Command{{"sh", "-c", "read line; echo 'not done'; exit 0"}});
    CHECK_FALSE(talk->ask("x", "done", 10));
    CHECK(talk->finish(10).ok());
  }
}

TEST_CASE("a conversation left unfinished kills its child") {
  TempDir dir;
  const std::string pid_file = (dir.path() / "pid").string();
  pid_t child = 0;
  {
    RealProcessRunner runner;
    auto talk = runner.start(
        Command{{"sh", "-c", "echo $$ > '" + pid_file + "'; echo ready; exec sleep 30"}});
    REQUIRE(talk->ask("", "ready", 10));
    std::ifstream in(pid_file);
    in >> child;
    REQUIRE(child > 0);
  }
  CHECK(has_ended(child));
}

TEST_CASE("run_all runs its commands at once and answers in their order") {
  TempDir dir;
  std::string flag = (dir.path() / "flag").string();
  // The first waits for a file that only the second makes: run one after the other, the
  // first would run out of its time.
  std::vector<Command> commands = {
      {{"sh", "-c", "while [ ! -e '" + flag + "' ]; do sleep 0.01; done; echo first"}, {}, {}, 20},
      {{"sh", "-c", "sleep 0.2; touch '" + flag + "'; echo second"}, {}, {}, 20},
      {{"sh", "-c", "echo third >&2; exit 3"}, {}, {}, 20}};
  RealProcessRunner runner;
  std::vector<ProcessResult> results = runner.run_all(commands, 0);
  REQUIRE(results.size() == 3);
  CHECK_FALSE(results[0].timed_out);
  CHECK(results[0].out == "first\n");
  CHECK(results[1].out == "second\n");
  CHECK(results[2].exit_code == 3);
  CHECK(results[2].err == "third\n");
}

TEST_CASE("run_all: one command's error is thrown once every other has ended") {
  TempDir dir;
  std::string done = (dir.path() / "done").string();
  std::vector<Command> commands = {{{}, {}, {}, 20},
                                   {{"sh", "-c", "sleep 0.2; touch '" + done + "'"}, {}, {}, 20}};
  RealProcessRunner runner;
  REQUIRE_THROWS_WITH(runner.run_all(commands, 2), "internal: empty command");
  CHECK(std::filesystem::exists(done));
}

TEST_CASE("the base runner's run_all runs its commands one after another, in order") {
  struct Recording : kopt::util::ProcessRunner {
    std::vector<std::string> ran;
    ProcessResult run(const Command &command) override {
      ran.push_back(command.argv.at(0));
      ProcessResult result;
      result.exit_code = 0;
      result.out = command.argv.at(0);
      return result;
    }
  } runner;
  std::vector<ProcessResult> results = runner.run_all({{{"a"}}, {{"b"}}, {{"c"}}}, 0);
  CHECK(runner.ran == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(results.size() == 3);
  CHECK(results[2].out == "c");
}
