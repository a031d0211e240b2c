#include "util/confine.hpp"
#include "util/process.hpp"
#include "util/read_file.hpp"

#include <doctest/doctest.h>

#include "temp_dir.hpp"

#include <csignal>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using kopt::test::TempDir;
using kopt::util::Command;
using kopt::util::Confinement;
using kopt::util::ProcessResult;
using kopt::util::RealProcessRunner;

namespace fs = std::filesystem;

TEST_SUITE_BEGIN("util::confine");

namespace {

// Runs `argv` confined to writing `writable`, with the real tools of this machine.
ProcessResult confined(std::vector<std::string> argv, std::vector<fs::path> writable = {}) {
  Command command;
  command.argv = std::move(argv);
  command.timeout_s = 30;
  command.confinement = Confinement{std::move(writable), false};
  RealProcessRunner runner;
  return runner.run(command);
}

// Skips a test where this kernel offers no Landlock (its writes are then not confined).
bool no_landlock() {
  if (kopt::util::landlock_abi() == 0) {
    MESSAGE("skipped: this kernel has no Landlock");
    return true;
  }
  return false;
}

} // namespace

TEST_CASE("a confined child writes its own folder, and nothing outside it") {
  if (no_landlock()) {
    return;
  }
  TempDir tmp;
  fs::create_directories(tmp.path() / "round");
  // The shell opens the file itself (`exec 3>`): no process started, and no stdout closed or
  // redirected (coreutils close their stdout at exit; the shell redirects a builtin's through
  // a close of it), which a confined child may not do.
  auto write_to = [](const fs::path &file) {
    return std::vector<std::string>{"/bin/sh", "-c", "exec 3>'" + file.string() + "'"};
  };
  ProcessResult inside = confined(write_to(tmp.path() / "round/ok"), {tmp.path() / "round"});
  CHECK(inside.ok());
  CHECK(fs::exists(tmp.path() / "round/ok"));
  CHECK(inside.confined.find("Landlock ABI") == 0);
  ProcessResult outside = confined(write_to(tmp.path() / "bin"), {tmp.path() / "round"});
  CHECK_FALSE(outside.ok());
  CHECK(outside.err.find("Permission denied") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "bin"));
  // Its own executable's folder is no exception: another candidate's program stays as built.
  tmp.write("bin/candidate_01", "BEST's harness");
  ProcessResult replace =
      confined(write_to(tmp.path() / "bin/candidate_01"), {tmp.path() / "round"});
  CHECK_FALSE(replace.ok());
  CHECK(kopt::util::read_file(tmp.path() / "bin/candidate_01") == "BEST's harness");
}

TEST_CASE("a GPU runtime's child may name its threads (its own /proc/<pid>/task), no more") {
  if (no_landlock()) {
    return;
  }
  Command command{{"/bin/sh", "-c", "exec 3>/proc/$$/task/$$/comm"}, {}, {}, 30};
  command.confinement = Confinement{{}, false, true};
  RealProcessRunner runner;
  CHECK(runner.run(command).ok());
  command.argv = {"/bin/sh", "-c", "exec 3>/proc/$PPID/comm"}; // another process's
  CHECK_FALSE(runner.run(command).ok());
  command.confinement->gpu_runtime = false;
  command.argv = {"/bin/sh", "-c", "exec 3>/proc/$$/task/$$/comm"};
  CHECK_FALSE(runner.run(command).ok());
}

TEST_CASE("a confined child cannot change its CPU") {
  ProcessResult r = confined({"/usr/bin/taskset", "-c", "0", "/bin/true"});
  CHECK(r.signal == SIGSYS);
}

TEST_CASE("a confined child starts no process and no other program") {
  ProcessResult forked = confined({"/bin/sh", "-c", "/bin/true & wait"});
  CHECK(forked.signal == SIGSYS);
  ProcessResult exec = confined({"/bin/sh", "-c", "exec /bin/true"});
  CHECK(exec.signal == SIGSYS);
  // The program kopt starts is executed.
  CHECK(confined({"/bin/sh", "-c", "exit 0"}).ok());
}

TEST_CASE("a confined child signals nothing but itself") {
  pid_t other = ::fork();
  REQUIRE(other >= 0);
  if (other == 0) {
    ::execv("/bin/sleep",
            const_cast<char *const *>(std::vector<const char *>{"sleep", "30", nullptr}.data()));
    ::_exit(127);
  }
  ProcessResult r = confined({"/bin/kill", "-STOP", std::to_string(other)});
  CHECK(r.signal == SIGSYS);
  ::kill(other, SIGKILL);
  int status = 0;
  ::waitpid(other, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL); // never stopped by the child, killed by the test
}

TEST_CASE("a confined child keeps its output: no dup2 onto it, no close of it") {
  ProcessResult redirected = confined({"/bin/sh", "-c", "exec 1>/dev/null; echo hidden"});
  CHECK(redirected.signal == SIGSYS);
  CHECK(redirected.out.find("hidden") == std::string::npos);
  ProcessResult closed = confined({"/bin/sh", "-c", "exec 1>&-; echo hidden"});
  CHECK(closed.signal == SIGSYS);
}

TEST_CASE("a writable path that does not exist is an error naming it") {
  Command command{{"/bin/sh", "-c", "exit 0"}, {}, {}, 10};
  command.confinement = Confinement{{"/nonexistent/kopt-round"}, false};
  RealProcessRunner runner;
  if (kopt::util::landlock_abi() > 0) {
    CHECK_THROWS_WITH(runner.run(command),
                      doctest::Contains("cannot confine a run to /nonexistent/kopt-round"));
  }
}

TEST_SUITE_END();
