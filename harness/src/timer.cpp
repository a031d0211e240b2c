#include "kopt/harness/timer.hpp"

#include "kopt/harness/error.hpp"
#include "kopt/harness/problem.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>

namespace kopt::harness {

namespace {

// The CPU time of every thread of this process so far, microseconds.
double process_cpu_us() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e6 * static_cast<double>(t.tv_sec) + 1e-3 * static_cast<double>(t.tv_nsec);
}

} // namespace

double ChronoTimer::time_run(Problem &problem) {
  const double cpu = process_cpu_us();
  auto start = std::chrono::steady_clock::now();
  problem.run();
  problem.sync();
  auto stop = std::chrono::steady_clock::now();
  cpu_us_ = process_cpu_us() - cpu;
  return std::chrono::duration<double, std::micro>(stop - start).count();
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
