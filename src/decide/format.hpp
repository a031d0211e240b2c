#pragma once
// The decision as text: the per-class table, the traffic rows and the verdict line.

#include "decide/decision.hpp"

#include <optional>
#include <string>
#include <utility>

namespace kopt::decide {

/// Returns the per-class table as fixed-width text, ending with the overall row.
std::string format_table(const Decision &decision);

/// Returns the traffic rows as fixed-width text ("" without them).
std::string format_traffic(const Decision &decision);

/// Returns "verdict: <v> (<reason>)", plus the split advice on a second line when there is one.
std::string format_verdict(const Decision &decision);

/// How many decimals a change is written with.
enum class Digits {
  two,    ///< always two: "-5.20%", "+0.00%" (tables, verdicts, the ledger, `kopt log`)
  compact ///< fewer the larger it is: "-12%", "+3.4%", "-0.52%", "0%" (the report's figures)
};

/// Formats a change as a signed percentage ("-5.20%"); one that rounds to zero is "+0.00%"
/// (compact: "0%"), never "-0.00%".
std::string format_change(double change, Digits digits = Digits::two);

/// Formats a fraction (a share, a limit) as an unsigned percentage with `digits` significant
/// digits: "43.3%", "1.53e-05%".
std::string format_percent(double fraction, int digits);

/// Formats an interval of changes as "[-5.20%, +1.00%]".
std::string format_interval(double low, double high, Digits digits = Digits::two);

/// The interval written after a change: " [-5.20%, +1.00%]", or "" when there is none.
std::string interval_after(const std::optional<std::pair<double, double>> &interval,
                           Digits digits = Digits::two);

} // namespace kopt::decide
