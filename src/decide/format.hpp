#pragma once
// The decision as text: the per-class table, the traffic rows and the verdict line.

#include "decide/decision.hpp"

#include <string>

namespace kopt::decide {

/// Returns the per-class table as fixed-width text, ending with the overall row.
std::string format_table(const Decision &decision);

/// Returns the traffic rows as fixed-width text ("" without them).
std::string format_traffic(const Decision &decision);

/// Returns "verdict: <v> (<reason>)", plus the split advice on a second line when there is one.
std::string format_verdict(const Decision &decision);

/// Formats a change as a signed percentage with two decimals ("-5.20%").
std::string format_change(double change);

/// Formats an interval of changes as "[-5.20%, +1.00%]".
std::string format_interval(double low, double high);

} // namespace kopt::decide
