#pragma once

#include "heuristic/results.hpp"
#include "heuristic/rules.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kopt::heuristic {

/// What `fit` may use: at most `max_arms` rules, thresholds over `features` (any Feature:
/// columns, products "M*N", fills, waves and their ratios), at least `min_leaf` shapes behind
/// every rule.
struct FitOptions {
  int max_arms = 8;
  std::vector<std::string> features = {"M", "N", "K", "M*N"};
  size_t min_leaf = 1;
  /// 0: the tie-slack cost below. When > 0, the fit minimises the slowdown beyond this slack,
  /// the `within` match that eval reports with --tie: a kernel within (1 + within) x a shape's
  /// tuned time costs 0 there, any other log(us / tuned us) (log 1000 when unusable), and only
  /// the best-first tree (1) is grown, since the classification tree follows the tuned kernel,
  /// which such a fit need not pick.
  double within = 0;
};

/// Learns an ordered rule list from a full results table. Each shape's cost for a kernel is 0
/// for its tuned choice (Shape::tuned, resolve_ties) and otherwise log(us_kernel / us_fastest),
/// at least log(1 + ties) (log 1000 when the kernel is unusable or unmeasured there): a kernel
/// tied with the tuned one costs the whole slack, so the fit prefers the consistent choice. A
/// leaf picks the kernel with the least summed cost over its shapes; with ties 0 the total cost
/// is the log of the geomean slowdown vs tuned times the shape count. Two decision trees over
/// thresholds `feature <= t` (t halfway between neighbouring values) are grown and the cheaper
/// one is kept (the smaller on a tie): (1) best-first, applying the split with the largest cost
/// reduction until `max_arms` leaves or none helps; (2) a classification tree on the per-shape
/// tuned kernel (Gini) grown until pure, then pruned by collapsing the split whose removal costs
/// least until `max_arms` leaves remain; it finds rules where no single split helps on its own
/// (a kernel that is everywhere second best). Each leaf becomes one rule holding its path's
/// tightest bounds, in left-to-right order; the last rule has no conditions. With
/// FitOptions::within the costs are the slowdowns beyond that slack, and tree (1) alone is grown.
RuleList fit(const Results &results, const FitOptions &options);

/// A shape where a rule list's pick is not the tuned choice.
struct Miss {
  std::string shape;   ///< "M=..,N=..,K=.."
  std::string pick;    ///< the kernel the rules (or the default) picked
  std::string tuned;   ///< the tuned choice
  double slowdown = 0; ///< pick us / tuned us; 0 when the pick has no usable timing there
};

/// How a rule list does on one set of shapes, against the per-shape tuned choice (Shape::tuned:
/// the raw argmin, or with ties the resolved choice).
struct Score {
  size_t shapes = 0;
  size_t matched = 0;          ///< shapes where the pick is the tuned choice
  size_t within_tie = 0;       ///< shapes where the pick is within `tie` of the tuned time
  size_t unmeasured = 0;       ///< picks with no usable timing on the shape (left out of means)
  double log_sum = 0;          ///< sum of log(slowdown) over measured picks
  double worst = 1;            ///< the largest slowdown
  std::string worst_shape;     ///< "M=..,N=..,K=.." of the worst pick
  double default_log_sum = 0;  ///< the same for the default kernel alone
  size_t default_measured = 0; ///< shapes where the default had a usable timing
  double default_worst = 1;
  size_t default_matched = 0;  ///< shapes where the default kernel is the tuned choice
  size_t baseline_matched = 0; ///< the same for the most frequent kernel (Evaluation::baseline)
  double tuned_log_sum = 0;    ///< sum of log(tuned us / raw argmin us): what the ties cost
  double tuned_worst = 1;      ///< the largest tuned us / raw argmin us
  std::string tuned_worst_shape;
  std::vector<Miss> misses; ///< every shape whose pick is not the tuned choice, in shape order

  /// Geomean slowdown of the picks vs tuned.
  double geomean() const;
  /// Geomean slowdown of the default kernel alone vs tuned.
  double default_geomean() const;
  /// Geomean slowdown of the tuned choices vs the raw argmin (1 without ties).
  double tuned_geomean() const;
  /// Adds another score's shapes to this one.
  void add(const Score &other);
};

/// An evaluation: the total and one score per group (N,K).
struct Evaluation {
  Score total;
  std::vector<std::pair<std::string, Score>> groups; ///< sorted by group name
  double tie = 0;
  double ties = 0;           ///< the ties of the tuned choices (Results::ties)
  bool winners_only = false; ///< scored on a winners-only table: match rates only
  std::string source;        ///< the table, and its (gfx, cu_num) group: "t.csv (gfx942,304)"
  std::string default_kernel;
  std::string baseline; ///< the most frequent tuned kernel of the shapes the rules were fit on
  std::vector<std::string> held_out; ///< the groups a holdout scored, "" for none
  std::string split;                 ///< how they were chosen: "seed 1, 4 of 12 groups"
};

/// Scores `rules` (falling back to `default_kernel` when no rule holds) on every shape of
/// `results` that has a usable kernel. `tie` is the relative slack of `within_tie`. The
/// baseline is `baseline`, or when "" the most frequent tuned kernel of `results`.
Evaluation evaluate_rules(const Results &results, const RuleList &rules,
                          const std::string &default_kernel, double tie,
                          const std::string &baseline = "");

/// Cross-validation over groups: fits on every group outside `holdout` and scores the holdout.
/// The held-out shapes are scored against the tuned choices of all of `results` (the tuned
/// table); the fit sees only the other groups, whose tuned choices are resolved among them.
Evaluation evaluate_holdout(const Results &results, const std::vector<std::string> &holdout,
                            const FitOptions &options, const std::string &default_kernel,
                            double tie);

/// k-fold cross-validation over groups (group i, in sorted order, is in fold i % folds): every
/// group is scored by a rule list fit without it; the scores are pooled.
Evaluation evaluate_folds(const Results &results, int folds, const FitOptions &options,
                          const std::string &default_kernel, double tie);

/// Parses --holdout "4096,7168;1536,7168": each item gives the group columns' values (N,K) in
/// order; returns the group names. A group that is not in `results` is an error naming it; an
/// item of the wrong size is an error that says what a group of `results` is.
std::vector<std::string> parse_holdout(const Results &results, const std::string &text);

/// The groups of `results` (group_of), sorted and without repeats.
std::vector<std::string> all_groups(const Results &results);

/// A fixed held-out split anyone can redo from the same table: of the sorted groups, a
/// Fisher-Yates shuffle driven by std::mt19937_64(seed) (for i = n-1 down to 1, swap i with
/// draw % (i + 1); the engine's draws are fixed by the standard, unlike std::shuffle's) keeps the
/// first round(fraction x n), at least 1 and at most n - 1. Returned sorted. A fraction outside
/// (0, 1) or fewer than 2 groups is an error.
std::vector<std::string> seeded_groups(const Results &results, double fraction, uint64_t seed);

/// The evaluation as JSON (match, geomean, worst, default geomean, per-group rows, and every
/// miss, slowest first).
nlohmann::json to_json(const Evaluation &e);

/// The evaluation as a text report with a per-group table, then the `misses` slowest misses
/// (pick, tuned choice, slowdown) when `misses` > 0.
std::string to_text(const Evaluation &e, size_t misses = 0);

} // namespace kopt::heuristic
