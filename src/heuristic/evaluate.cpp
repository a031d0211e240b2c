#include "heuristic/fit.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

namespace kopt::heuristic {

namespace {

std::string shape_name(const Results &r, const Shape &s) { return shape_label(r.columns, s.dims); }

// The table for messages: "tuned.csv (gfx942,304)" for a group of an aiter table.
std::string source_name(const Results &r) {
  return r.table_group.empty() ? r.source : r.source + " (" + r.table_group + ")";
}

// An evaluation of `results` with nothing scored yet: what it is of and with which settings.
Evaluation empty_evaluation(const Results &results, const std::string &default_kernel, double tie) {
  Evaluation e;
  e.tie = tie;
  e.ties = results.ties;
  e.winners_only = results.winners_only;
  e.source = source_name(results);
  e.default_kernel = default_kernel;
  return e;
}

// Keeps the larger slowdown of two and the shape it was found at (the first on a tie).
void keep_worst(double &worst, std::string &shape, double other, const std::string &other_shape) {
  if (other > worst) {
    worst = other;
    shape = other_shape;
  }
}

} // namespace

double Score::geomean() const {
  size_t n = shapes - unmeasured;
  return n ? std::exp(log_sum / static_cast<double>(n)) : 1.0;
}

double Score::default_geomean() const {
  return default_measured ? std::exp(default_log_sum / static_cast<double>(default_measured)) : 1.0;
}

double Score::tuned_geomean() const {
  return shapes ? std::exp(tuned_log_sum / static_cast<double>(shapes)) : 1.0;
}

void Score::add(const Score &o) {
  shapes += o.shapes;
  matched += o.matched;
  within_tie += o.within_tie;
  unmeasured += o.unmeasured;
  log_sum += o.log_sum;
  keep_worst(worst, worst_shape, o.worst, o.worst_shape);
  default_log_sum += o.default_log_sum;
  default_measured += o.default_measured;
  default_worst = std::max(default_worst, o.default_worst);
  default_matched += o.default_matched;
  baseline_matched += o.baseline_matched;
  tuned_log_sum += o.tuned_log_sum;
  keep_worst(tuned_worst, tuned_worst_shape, o.tuned_worst, o.tuned_worst_shape);
  misses.insert(misses.end(), o.misses.begin(), o.misses.end());
}

Evaluation evaluate_rules(const Results &results, const RuleList &rules,
                          const std::string &default_kernel, double tie,
                          const std::string &baseline) {
  Evaluation e = empty_evaluation(results, default_kernel, tie);
  e.baseline = baseline.empty() ? most_frequent(results) : baseline;
  std::map<std::string, Score> groups;
  for (const auto &s : results.shapes) {
    const std::string &best = s.tuned;
    if (best.empty()) {
      continue;
    }
    double best_us = s.kernels.at(best).us;
    double raw_us = s.kernels.at(s.best()).us;
    std::string pick = evaluate(rules, results.columns, s.dims);
    if (pick.empty()) {
      pick = default_kernel;
    }
    Score one;
    one.shapes = 1;
    one.default_matched = default_kernel == best ? 1 : 0;
    one.baseline_matched = e.baseline == best ? 1 : 0;
    one.tuned_log_sum = std::log(best_us / raw_us);
    one.tuned_worst = best_us / raw_us;
    one.tuned_worst_shape = shape_name(results, s);
    auto it = s.kernels.find(pick);
    const bool measured = it != s.kernels.end() && it->second.usable();
    const double slowdown = measured ? it->second.us / best_us : 0;
    if (pick != best) {
      one.misses.push_back({shape_name(results, s), pick, best, slowdown});
    }
    if (!measured) {
      one.unmeasured = 1;
    } else {
      one.matched = pick == best ? 1 : 0;
      one.within_tie = pick == best || slowdown <= 1 + tie ? 1 : 0;
      one.log_sum = std::log(slowdown);
      one.worst = slowdown;
      one.worst_shape = shape_name(results, s);
    }
    auto d = s.kernels.find(default_kernel);
    if (d != s.kernels.end() && d->second.usable()) {
      one.default_measured = 1;
      one.default_log_sum = std::log(d->second.us / best_us);
      one.default_worst = d->second.us / best_us;
    }
    e.total.add(one);
    groups[group_of(results, s)].add(one);
  }
  e.groups.assign(groups.begin(), groups.end());
  return e;
}

Evaluation evaluate_holdout(const Results &results, const std::vector<std::string> &holdout,
                            const FitOptions &options, const std::string &default_kernel,
                            double tie) {
  Results test = select_groups(results, holdout, true);
  if (test.shapes.empty()) {
    throw Error("heuristic eval: --holdout: no shapes in " + util::join(holdout, "; "));
  }
  Results train = select_groups(results, holdout, false);
  if (train.shapes.empty()) {
    throw Error("heuristic eval: --holdout leaves no shapes to fit on");
  }
  resolve_ties(train, results.ties); // the fit must not see the held-out shapes' wins
  Evaluation e =
      evaluate_rules(test, fit(train, options), default_kernel, tie, most_frequent(train));
  e.held_out = holdout;
  std::sort(e.held_out.begin(), e.held_out.end());
  return e;
}

Evaluation evaluate_folds(const Results &results, int folds, const FitOptions &options,
                          const std::string &default_kernel, double tie) {
  std::vector<std::string> groups = all_groups(results);
  if (folds < 2 || static_cast<size_t>(folds) > groups.size()) {
    throw Error("heuristic eval: cross-validation needs 2 to " + std::to_string(groups.size()) +
                " folds (one per group at most), got " + std::to_string(folds));
  }
  Evaluation pooled = empty_evaluation(results, default_kernel, tie);
  std::set<std::string> baselines;
  for (int f = 0; f < folds; ++f) {
    std::vector<std::string> holdout;
    for (size_t i = static_cast<size_t>(f); i < groups.size(); i += static_cast<size_t>(folds)) {
      holdout.push_back(groups[i]);
    }
    Evaluation e = evaluate_holdout(results, holdout, options, default_kernel, tie);
    baselines.insert(e.baseline);
    pooled.total.add(e.total);
    pooled.groups.insert(pooled.groups.end(), e.groups.begin(), e.groups.end());
  }
  std::sort(pooled.groups.begin(), pooled.groups.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  // Each fold's baseline is its own training groups' most frequent kernel.
  pooled.baseline = util::join({baselines.begin(), baselines.end()}, " / ");
  return pooled;
}

std::vector<std::string> all_groups(const Results &results) {
  std::set<std::string> names;
  for (const auto &s : results.shapes) {
    names.insert(group_of(results, s));
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> parse_holdout(const Results &results, const std::string &text) {
  std::vector<std::string> columns = group_columns(results);
  std::vector<std::string> known = all_groups(results);
  std::vector<std::string> out;
  for (const auto &item : util::split(text, ';')) {
    if (util::trim(item).empty()) {
      continue;
    }
    std::vector<std::string> values = util::split(item, ',');
    if (values.size() != columns.size()) {
      throw Error("--holdout: '" + item + "': a group of " + source_name(results) + " is " +
                  std::to_string(columns.size()) + " values, " + util::join(columns, ",") +
                  " (the config columns other than M), got " + std::to_string(values.size()));
    }
    std::vector<int64_t> dims;
    for (size_t c = 0; c < columns.size(); ++c) {
      dims.push_back(util::parse_int(util::trim(values[c]), "--holdout: " + columns[c]));
    }
    std::string group = shape_label(columns, dims);
    if (!std::binary_search(known.begin(), known.end(), group)) {
      throw Error("--holdout: " + group + " is not a group of " + source_name(results) +
                  " (groups: " + util::join(known, "; ") + ")");
    }
    out.push_back(group);
  }
  if (out.empty()) {
    throw Error("--holdout: expected at least one group (" + util::join(columns, ",") +
                "; ...), got '" + text + "'");
  }
  return out;
}

std::vector<std::string> seeded_groups(const Results &results, double fraction, uint64_t seed) {
  std::vector<std::string> groups = all_groups(results);
  if (!(fraction > 0 && fraction < 1)) {
    throw Error("--holdout-seeded: expected a fraction of the groups between 0 and 1, got " +
                util::format_number(fraction));
  }
  const size_t n = groups.size();
  if (n < 2) {
    throw Error("--holdout-seeded: " + source_name(results) + " has " + std::to_string(n) +
                " group (" + util::join(group_columns(results), ",") +
                "): nothing is left to fit on when it is held out");
  }
  std::mt19937_64 engine(seed);
  for (size_t i = n - 1; i > 0; --i) {
    std::swap(groups[i], groups[static_cast<size_t>(engine() % (i + 1))]);
  }
  const size_t count = std::clamp<size_t>(
      static_cast<size_t>(std::llround(fraction * static_cast<double>(n))), 1, n - 1);
  groups.resize(count);
  std::sort(groups.begin(), groups.end());
  return groups;
}

} // namespace kopt::heuristic
