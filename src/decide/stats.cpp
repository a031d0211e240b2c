#include "decide/stats.hpp"

#include <cmath>
#include <numeric>

namespace kopt::decide {

namespace {

// The regularized incomplete beta function I_x(a, b) by its continued fraction (modified
// Lentz), which converges fast for x < (a + 1) / (a + b + 2); the symmetry
// I_x(a, b) = 1 - I_{1-x}(b, a) covers the rest.
double incomplete_beta(double x, double a, double b) {
  if (x <= 0) {
    return 0;
  }
  if (x >= 1) {
    return 1;
  }
  if (x > (a + 1) / (a + b + 2)) {
    return 1 - incomplete_beta(1 - x, b, a);
  }
  double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                          b * std::log(1 - x)) /
                 a;
  const double tiny = 1e-300;
  double f = 1;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  d = std::abs(d) < tiny ? tiny : d;
  d = 1 / d;
  f = d;
  for (int m = 1; m <= 300; ++m) {
    for (int step = 0; step < 2; ++step) {
      double numerator = step == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                   : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + numerator * d;
      d = std::abs(d) < tiny ? tiny : d;
      c = 1 + numerator / c;
      c = std::abs(c) < tiny ? tiny : c;
      d = 1 / d;
      f *= c * d;
    }
    if (std::abs(c * d - 1) < 1e-15) {
      break;
    }
  }
  return front * f;
}

// P(T <= t) for Student's t with `df` degrees of freedom.
double student_t_cdf(double t, double df) {
  double tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

} // namespace

double student_t_quantile(double p, double df) {
  if (p == 0.5) {
    return 0;
  }
  if (p < 0.5) {
    return -student_t_quantile(1 - p, df);
  }
  double low = 0;
  double high = 1;
  while (student_t_cdf(high, df) < p && high < 1e12) {
    high *= 2;
  }
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    double mid = (low + high) / 2;
    (student_t_cdf(mid, df) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

Interval t_interval(const std::vector<double> &values, double confidence) {
  Interval interval;
  interval.n = static_cast<int>(values.size());
  if (values.empty()) {
    return interval;
  }
  double n = static_cast<double>(values.size());
  interval.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  interval.low = interval.high = interval.mean;
  if (values.size() < 2) {
    return interval;
  }
  double squares = 0;
  for (double v : values) {
    squares += (v - interval.mean) * (v - interval.mean);
  }
  double standard_error = std::sqrt(squares / (n - 1) / n);
  double half = student_t_quantile((1 + confidence) / 2, n - 1) * standard_error;
  interval.low = interval.mean - half;
  interval.high = interval.mean + half;
  return interval;
}

double pooled_confidence(double confidence, int looks) {
  const double k = looks < 1 ? 1 : looks;
  return 1 - (1 - confidence) * 2 / (k * (k + 1));
}

} // namespace kopt::decide
