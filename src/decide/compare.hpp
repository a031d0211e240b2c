#pragma once
// The paired comparison's interval and noise rule, shared by the keep test and the
// application A/B.

#include "decide/decision.hpp"

#include <vector>

namespace kopt::decide {

/// Sets `row`'s ratio, change and interval from its per-round log(candidate us / BEST us), the
/// rounds being the independent samples of the paired Student-t interval at `confidence`: the
/// keep test's class and traffic rows, and the application A/B.
void set_paired_change(ClassRow &row, const std::vector<double> &log_ratios, double confidence);

/// The paired noise rule for `row`'s state: better or worse only when the whole interval lies
/// beyond `threshold`; within it a tie, marked pending when the interval excludes zero.
void paired_state(ClassRow &row, double threshold);

} // namespace kopt::decide
