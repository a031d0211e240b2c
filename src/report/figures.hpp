#pragma once

#include "buildinfo/build_report.hpp"
#include "heuristic/fit.hpp"
#include "heuristic/results.hpp"
#include "heuristic/rules.hpp"
#include "ledger/ledger.hpp"
#include "report/loop.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kopt::report {

/// One figure of the report page: an HTML fragment (a heading, inline SVG, a caption) and how
/// many data marks it drew.
struct Figure {
  std::string id; ///< history, best, decision, heatmap, regions, waterfall
  std::string title;
  std::string html;
  size_t marks = 0;
};

/// A decision as the decision figure shows it: per class the change, its interval and state.
struct DecisionView {
  std::string candidate;
  std::string best;
  std::string verdict;
  std::string reason;
  double threshold = 0.01; ///< the noise threshold (keep.threshold)
  double confidence = 0.95;
  std::vector<ClassChange> classes;
  std::optional<ClassChange> overall;
  std::string speed_of_light; ///< each class's fraction of the device's limits; "": none
};

/// The state a change reads as against the noise threshold, by decide's rule for a change no
/// earlier measurement confirms: "better" or "worse" when its interval (without one, the change)
/// lies beyond the threshold, "pending" when the interval excludes 0 within it, else "tie".
std::string change_state(double change, const std::optional<std::pair<double, double>> &interval,
                         double threshold);

/// Every attempt in order: per class its change and interval, coloured by verdict, over the
/// tie band; attempts that compared no class (incorrect, failed) in rows under the plot; a
/// candidate attempted more than once labelled with the attempt's number ("07 (2)"). A table
/// below lists each attempt's verdict, per-class and overall changes and hypothesis. Nothing
/// when no attempt was recorded.
std::optional<Figure> history_figure(const std::vector<Attempt> &attempts, double threshold);

/// BEST's geomean (us) after each keep, from the ledger's kept rows. Nothing without rows.
std::optional<Figure> best_figure(const ledger::State &state);

/// The latest decision: one row per class, its change with the interval and the threshold band.
std::optional<Figure> decision_figure(const DecisionView &decision);

/// Kernel x shape: each kernel's time relative to the shape's fastest usable kernel.
std::optional<Figure> heatmap_figure(const heuristic::Results &results);

/// The heuristic's region map over (M, product of the other config columns): the picks as
/// background, the tuned kernel per shape as dots, misses ringed and sized by their slowdown.
std::optional<Figure> region_figure(const heuristic::Results &results,
                                    const heuristic::RuleList &rules,
                                    const std::string &default_kernel,
                                    const heuristic::Evaluation &evaluation,
                                    const std::string &rules_source);

/// The compile waterfall of a ninja run: one bar per command on its job lane (TUs coloured by
/// ccache hit or miss), the family's compile budget marked from its first command.
std::optional<Figure> waterfall_figure(const std::vector<buildinfo::LoggedCommand> &commands,
                                       const buildinfo::BuildReport &report,
                                       const std::string &family, double budget_s);

} // namespace kopt::report
