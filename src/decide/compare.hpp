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

/// The paired noise rule for `row`'s state: beyond `threshold` at once; within it only when the
/// interval excludes zero now and excluded it on the same side in `previous` (the previous
/// measurement's rows), else pending. `again` holds the rows of this same measurement decided
/// before: what that decision confirmed stays confirmed. Without either, the threshold rule.
void paired_state(ClassRow &row, double threshold, const std::vector<ClassRow> *previous = nullptr,
                  const std::vector<ClassRow> *again = nullptr);

} // namespace kopt::decide
