#include "kopt/harness/compare.hpp"

#include "kopt/harness/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace kopt::harness {

Tolerance tolerance_for(std::string_view dtype) {
  // Roughly a few units in the last place of each format, as CK and aiter's checks use.
  if (dtype == "fp32") {
    return {1e-5, 1e-4};
  }
  if (dtype == "fp16") {
    return {1e-3, 1e-3};
  }
  if (dtype == "bf16") {
    return {1e-2, 1e-2};
  }
  if (dtype == "fp8") {
    return {6.25e-2, 6.25e-2};
  }
  throw Error("unknown output dtype '" + std::string(dtype) + "' (expected fp32, fp16, bf16, fp8)");
}

double Comparison::error() const {
  return elements == 0 ? 0.0 : static_cast<double>(mismatches) / static_cast<double>(elements);
}

Comparison compare(const std::vector<float> &output, const std::vector<float> &golden,
                   Tolerance tolerance) {
  if (output.size() != golden.size()) {
    throw Error("output has " + std::to_string(output.size()) + " elements, the golden " +
                std::to_string(golden.size()));
  }
  Comparison result;
  result.elements = output.size();
  for (std::size_t i = 0; i < output.size(); ++i) {
    double x = output[i];
    double g = golden[i];
    double diff = std::fabs(x - g);
    // A NaN on either side (or inf - inf) always fails: a NaN output is never "close".
    if (std::isnan(diff)) {
      ++result.nans;
      ++result.mismatches;
      continue;
    }
    if (!(diff <= tolerance.atol + tolerance.rtol * std::fabs(g))) {
      ++result.mismatches;
    }
    result.max_abs = std::max(result.max_abs, diff);
    if (g != 0 && diff / std::fabs(g) > result.max_rel) {
      result.max_rel = diff / std::fabs(g);
    }
  }
  return result;
}

} // namespace kopt::harness
