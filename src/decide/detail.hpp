#pragma once
// Internal to decide/: the steps decide() takes, shared by admit.cpp (which measurements may be
// compared), compare.cpp (the class rows and their states) and decide.cpp (the verdict).

#include "decide/decide.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kopt::decide::detail {

/// A BEST config and the candidate's result for the same config values.
using Pair = std::pair<const profile::ConfigResult *, const profile::ConfigResult *>;

/// BEST's configs paired with the candidate's results.
struct Pairing {
  std::vector<Pair> pairs;
  std::vector<std::string> missing; ///< BEST's configs the candidate has no result for
  /// The candidate's results no BEST config took, by config values.
  std::map<std::vector<std::string>, std::vector<size_t>> unpaired;
};

/// The pairs by BEST's config class, in the order classes first appear, with their counts.
struct Classes {
  std::vector<std::string> order;
  std::map<std::string, std::vector<Pair>> pairs;
  std::map<std::string, std::vector<double>> counts; ///< empty without a count column
  std::vector<double> all_counts;
  bool weigh_by_count = false; ///< the geomeans weigh configs by count (Weighting::count)

  /// A class's geomean weights: its counts under count weighting, else none (all equal).
  std::vector<double> weights(const std::string &name) {
    return weigh_by_count ? counts[name] : std::vector<double>{};
  }
};

/// Lists at most `limit` items and says how many more there were, so a reason stays one line.
std::string list_some(const std::vector<std::string> &items, size_t limit = 8);

/// Returns the measurement's timer: "events" for harness time (the events backend, or a profiler
/// that failed and left the harness's numbers), else its source.
std::string effective_source(const profile::Measurement &m);

/// Returns "a1b2c3d4e5f6 (-O3: c++ -O3 -DNDEBUG ...)": a build's hash, optimisation and flags.
std::string build_label(const profile::Measurement &m);

/// Returns `d` with verdict failed and `reason`.
Decision failed(Decision d, std::string reason);

/// Returns the decision that refuses measurements that cannot be compared at all, or a
/// candidate that is not the code it claims to be; nullopt when they may be paired.
std::optional<Decision> refuse_inputs(const Decision &d, const profile::Measurement &best,
                                      const profile::Measurement &candidate,
                                      const Request &request);

/// Pairs each BEST config with the candidate's result for the same values (in order, so a
/// config listed twice pairs with its second occurrence).
Pairing pair_configs(const profile::Measurement &best, const profile::Measurement &candidate);

/// The correctness rule over the paired results: returns the incorrect decision when a config
/// has no result or one is not is_correct(), else nullopt.
std::optional<Decision> refuse_incorrect(const Decision &decision, const Pairing &p,
                                         const profile::Measurement &best);

/// Returns the failed decision when some timed runs went unchecked, else nullopt.
std::optional<Decision> refuse_unchecked(const Decision &decision, const Pairing &p,
                                         const profile::Measurement &best);

/// Returns why the paired results cannot be compared (extra configs, a config whose class or
/// time is off, different devices, builds or timing sources), or "" when they can.
std::string not_comparable(const Pairing &p, const Options &options,
                           const profile::Measurement &best, const profile::Measurement &candidate);

/// Returns the index of the configs file's count column (calls per shape), or -1.
std::ptrdiff_t count_column_of(const std::vector<std::string> &columns);

/// Returns the rounds both measurements hold samples of when the candidate was measured side
/// by side with this BEST measurement, else 0.
size_t side_by_side_rounds(const profile::Measurement &best, const profile::Measurement &candidate);

/// Groups `pairs` by class, with each one's `count_column` value (when not -1). Returns why a
/// count is unusable, or "".
std::string group_by_class(const std::vector<Pair> &pairs, const std::vector<std::string> &columns,
                           std::ptrdiff_t count_column, Classes &classes);

/// Sets each class's row and state, then the overall row, and the traffic rows when the configs
/// carry counts; `rounds` 0 compares geomeans only.
void compare_classes(Decision &d, Classes &classes, const std::vector<Pair> &pairs, size_t rounds);

} // namespace kopt::decide::detail
