#pragma once

#include <vector>

namespace kopt::util {

/// Returns the median of `values` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

} // namespace kopt::util
