#include "util/stats.hpp"

#include <algorithm>
#include <cmath>

namespace kopt::util {

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) {
    return upper;
  }
  double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(mid));
  return (lower + upper) / 2;
}

double geomean(const std::vector<double> &values) {
  if (values.empty()) {
    return 0;
  }
  double log_sum = 0;
  for (double v : values) {
    log_sum += std::log(v);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

} // namespace kopt::util
