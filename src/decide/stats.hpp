#pragma once

#include <vector>

namespace kopt::decide {

/// Returns the p-quantile of Student's t distribution with `df` degrees of freedom
/// (0 < p < 1, df >= 1), e.g. student_t_quantile(0.975, 4) = 2.776.
double student_t_quantile(double p, double df);

/// A mean and its two-sided confidence interval.
struct Interval {
  double mean = 0;
  double low = 0;
  double high = 0;
  int n = 0;
};

/// Returns the mean of `values` with its Student-t interval at `confidence` (e.g. 0.95): the
/// exact interval for the mean of independent normal values. With fewer than two values, or
/// values that do not vary, the interval is the mean itself.
Interval t_interval(const std::vector<double> &values, double confidence);

} // namespace kopt::decide
