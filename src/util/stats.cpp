#include "util/stats.hpp"

#include <algorithm>

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

} // namespace kopt::util
