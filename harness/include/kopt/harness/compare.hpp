#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace kopt::harness {

/// Tolerances of one output dtype: an element passes when |x - g| <= atol + rtol * |g|.
struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-4;
};

/// Returns the default tolerance of an output dtype: fp32, fp16, bf16 or fp8; throws on others.
Tolerance tolerance_for(std::string_view dtype);

/// How one output differs from its golden, element by element.
struct Comparison {
  std::size_t elements = 0;
  std::size_t mismatches = 0; ///< elements outside tolerance, NaN included
  std::size_t nans = 0;       ///< elements where the output or the golden is NaN
  double max_abs = 0;         ///< largest |x - g| over elements that are not NaN
  double max_rel = 0;         ///< largest |x - g| / |g| over those with g != 0

  /// Returns mismatches / elements (0 for an empty output): the err_<impl> column.
  double error() const;
};

/// Compares every element of `output` with `golden` under `tolerance`; throws Error when their
/// sizes differ.
Comparison compare(const std::vector<float> &output, const std::vector<float> &golden,
                   Tolerance tolerance);

} // namespace kopt::harness
