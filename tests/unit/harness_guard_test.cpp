#include <kopt/harness/guard.hpp>

#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

// The guard stays off in a sanitized process (its runtime maps memory of its own at fixed
// addresses), so these tests skip there.
#if defined(__SANITIZE_ADDRESS__)
#define KOPT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KOPT_TEST_SANITIZED 1
#endif
#endif

TEST_SUITE_BEGIN("harness::guard");

namespace {

// What a child that guards itself and then runs `act` did: its exit status and stderr.
struct Outcome {
  int status = 0;
  std::string err;
};

Outcome guarded_child(void (*act)()) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(pipe_fds[1], 2);
    ::setenv(kopt::harness::kGuardVariable, "1", 1);
    std::string what = kopt::harness::guard_memory();
    if (what.rfind("guarded ", 0) != 0) {
      ::_exit(3);
    }
    act();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  Outcome outcome;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    outcome.err.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  ::waitpid(pid, &outcome.status, 0);
  return outcome;
}

void some_code() { ::write(2, "", 0); }

std::uintptr_t page_of(const void *p) {
  return reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{4095};
}

} // namespace

#if defined(__x86_64__) && !defined(KOPT_TEST_SANITIZED)
TEST_CASE("guarded, code cannot be made writable, and the refusal names the call") {
  Outcome o = guarded_child([] {
    ::mprotect(reinterpret_cast<void *>(page_of(reinterpret_cast<const void *>(&some_code))), 4096,
               PROT_READ | PROT_WRITE);
  });
  REQUIRE(WIFEXITED(o.status));
  CHECK(WEXITSTATUS(o.status) == kopt::harness::kRefusedExit);
  CHECK(o.err.find("kopt-refused: mprotect: changing the harness's read-only memory") !=
        std::string::npos);
}

TEST_CASE("guarded, constants cannot be mapped over") {
  static const char constant[8192] = "a harness constant";
  Outcome o = guarded_child([] {
    ::mmap(reinterpret_cast<void *>(page_of(constant)), 4096, PROT_READ | PROT_WRITE,
           MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  });
  REQUIRE(WIFEXITED(o.status));
  CHECK(WEXITSTATUS(o.status) == kopt::harness::kRefusedExit);
  CHECK(o.err.find("kopt-refused: mmap (MAP_FIXED)") != std::string::npos);
}

TEST_CASE("guarded, the handler of refusals cannot be replaced") {
  Outcome o = guarded_child([] { std::signal(SIGSYS, SIG_IGN); });
  REQUIRE(WIFEXITED(o.status));
  CHECK(WEXITSTATUS(o.status) == kopt::harness::kRefusedExit);
  CHECK(o.err.find("rt_sigaction (SIGSYS)") != std::string::npos);
}

TEST_CASE("guarded, /proc is not writable: no thread's name, no mem file") {
  Outcome o = guarded_child([] {
    int comm = ::open("/proc/self/comm", O_WRONLY);
    int mem = ::open("/proc/self/mem", O_RDWR);
    int tmp = ::open("/tmp", O_TMPFILE | O_WRONLY, 0600);
    ::_exit(comm < 0 && mem < 0 && tmp >= 0 ? 0 : 5);
  });
  REQUIRE(WIFEXITED(o.status));
  CHECK(WEXITSTATUS(o.status) == 0);
}

TEST_CASE("guarded, what a program does with its own memory still works") {
  Outcome o = guarded_child([] {
    // New memory, made writable and given back; threads (their stacks); large allocations.
    void *fresh = ::mmap(nullptr, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED || ::mprotect(fresh, 1 << 20, PROT_READ | PROT_WRITE) != 0) {
      ::_exit(4);
    }
    static_cast<char *>(fresh)[100] = 1;
    ::munmap(fresh, 1 << 20);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([] { std::vector<double> big(1 << 22, 1.0); });
    }
    for (auto &t : threads) {
      t.join();
    }
  });
  CHECK(o.err == "");
  REQUIRE(WIFEXITED(o.status));
  CHECK(WEXITSTATUS(o.status) == 0);
}
#endif

TEST_CASE("a refused call's name and reason, for kopt's messages") {
#if defined(__x86_64__)
  CHECK(kopt::harness::refused_call(SYS_sched_setaffinity) ==
        "sched_setaffinity: changing the CPU or the scheduling it runs with");
#endif
  CHECK(kopt::harness::refused_call(-1) == "");
}

TEST_SUITE_END();
