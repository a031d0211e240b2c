#include "kopt/harness/timer.hpp"

#include "kopt/harness/error.hpp"
#include "kopt/harness/problem.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace kopt::harness {

double ChronoTimer::time_run(Problem &problem) {
  auto start = std::chrono::steady_clock::now();
  problem.run();
  problem.sync();
  auto stop = std::chrono::steady_clock::now();
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
