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

/// The confidence of a decision on `looks` pooled measurements (profile::pool_rounds): look k
/// spends 2 (1 - confidence) / (k (k + 1)) of the error rate (look 1 all of it, as an unpooled
/// decision; all looks together twice it), so that however often the same code is measured
/// again, the chance that some look's interval lies wholly on one side of the true change stays
/// at most 1 - confidence per side (2.5% at the first look, 5% over all of them, at 0.95).
double pooled_confidence(double confidence, int looks);

} // namespace kopt::decide
