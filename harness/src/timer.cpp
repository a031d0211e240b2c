#include "kopt/harness/timer.hpp"

#include "kopt/harness/error.hpp"
#include "kopt/harness/problem.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <sys/syscall.h>
#include <thread>

namespace kopt::harness {

namespace {

// Reads `clock` by the kernel's own clock_gettime, through the syscall instruction in this
// function's code: not through a library's function or a pointer (libstdc++'s steady_clock calls
// clock_gettime through its PLT, whose slot a candidate could rewrite where that library binds
// lazily). Microseconds. The call costs a few hundred nanoseconds, beside runs of many.
double clock_us(clockid_t clock) {
  timespec t{};
#if defined(__x86_64__) && defined(__linux__)
  long result;
  asm volatile("syscall"
               : "=a"(result)
               : "0"(static_cast<long>(SYS_clock_gettime)), "D"(static_cast<long>(clock)), "S"(&t)
               : "rcx", "r11", "memory");
  (void)result;
#else
  ::clock_gettime(clock, &t);
#endif
  return 1e6 * static_cast<double>(t.tv_sec) + 1e-3 * static_cast<double>(t.tv_nsec);
}

} // namespace

double ChronoTimer::time_run(Problem &problem) {
  const double cpu = clock_us(CLOCK_PROCESS_CPUTIME_ID);
  const double start = clock_us(CLOCK_MONOTONIC);
  problem.run();
  problem.sync();
  const double stop = clock_us(CLOCK_MONOTONIC);
  cpu_us_ = clock_us(CLOCK_PROCESS_CPUTIME_ID) - cpu;
  return stop - start;
}

DeviceIdentity ChronoTimer::device() const {
  return {"host", static_cast<int>(std::thread::hardware_concurrency())};
}

double median(std::vector<double> values) {
  if (values.empty()) {
    throw Error("median of no values");
  }
  std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) {
    return upper;
  }
  double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

} // namespace kopt::harness
