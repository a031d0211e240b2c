#pragma once

#include <vector>

namespace kopt::util {

/// Returns the median of `values` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

/// Returns the geometric mean of `values` (exp of the mean of their logs); 0 when empty.
double geomean(const std::vector<double> &values);

} // namespace kopt::util
