#include "util/file_lock.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using kopt::util::FileLock;

TEST_SUITE_BEGIN("util::FileLock");

TEST_CASE("processes that read, change and write one file under the lock lose no update") {
  kopt::test::TempDir dir;
  auto counter = dir.write("counter", "0");
  auto lock_file = dir.path() / "locks" / "counter.lock"; // its folder is created
  const int processes = 6;
  const int increments = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      for (int i = 0; i < increments; ++i) {
        FileLock lock(lock_file);
        int value = std::stoi(kopt::util::read_file(counter));
        kopt::util::write_file_atomic(counter, std::to_string(value + 1));
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(kopt::util::read_file(counter) == std::to_string(processes * increments));
}

TEST_CASE("a second holder waits until the first releases, and is told who holds it") {
  kopt::test::TempDir dir;
  auto lock_file = dir.path() / "results-01.lock";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    FileLock lock(lock_file);
    (void)!::write(ready[1], "x", 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::_exit(0); // the kernel releases the lock of a process that ends
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  std::ostringstream waiting;
  auto start = std::chrono::steady_clock::now();
  {
    FileLock lock(lock_file, &waiting);
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(waited > 0.1);
  }
  CHECK(waiting.str() ==
        "kopt: waiting for " + lock_file.string() + " (held by pid " + std::to_string(pid) + ")\n");
  ::waitpid(pid, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("shared holders hold together; an exclusive one waits for them, told what they do") {
  kopt::test::TempDir dir;
  auto lock_file = dir.path() / "family.lock";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    FileLock lock(lock_file, nullptr, FileLock::Mode::shared, "kopt round of candidate 07");
    (void)!::write(ready[1], "x", 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  std::ostringstream waiting;
  {
    // Another round takes it beside the first at once.
    FileLock beside(lock_file, &waiting, FileLock::Mode::shared, "kopt round of candidate 08");
  }
  CHECK(waiting.str().empty());
  {
    auto start = std::chrono::steady_clock::now();
    FileLock alone(lock_file, &waiting, FileLock::Mode::exclusive, "kopt land");
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(waited > 0.1);
  }
  // The second round wrote the file last, but the first one still held the lock.
  CHECK(waiting.str().starts_with("kopt: waiting for " + lock_file.string() + " (held by pid "));
  CHECK(waiting.str().ends_with(": kopt round of candidate 08)\n"));
  CHECK(FileLock::holder(lock_file) == std::nullopt);
  ::waitpid(pid, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("a free lock is taken at once and says nothing") {
  kopt::test::TempDir dir;
  std::ostringstream waiting;
  { FileLock first(dir.path() / "a.lock", &waiting); }
  { FileLock again(dir.path() / "a.lock", &waiting); }
  CHECK(waiting.str().empty());
}

TEST_SUITE_END();
