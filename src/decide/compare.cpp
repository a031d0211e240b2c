// The comparison of BEST's and the candidate's times: each config class's geomean ratio, its
// interval over the side-by-side rounds, and the noise rule that gives the class its state.
#include "decide/compare.hpp"

#include "decide/detail.hpp"
#include "decide/stats.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <kopt/harness/config.hpp>

#include <algorithm>
#include <cmath>

namespace kopt::decide {

namespace {

using detail::Classes;
using detail::Pair;
using profile::Measurement;

// Weighted geomeans of one class; `weights` is empty (all 1) or one per pair.
ClassRow compare(const std::string &name, const std::vector<Pair> &pairs,
                 const std::vector<double> &weights = {}) {
  double log_best = 0;
  double log_candidate = 0;
  double n = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    double w = weights.empty() ? 1.0 : weights[i];
    log_best += w * std::log(pairs[i].first->us);
    log_candidate += w * std::log(pairs[i].second->us);
    n += w;
  }
  ClassRow row;
  row.config_class = name;
  row.configs = static_cast<int>(pairs.size());
  row.best_us = std::exp(log_best / n);
  row.candidate_us = std::exp(log_candidate / n);
  row.ratio = std::exp((log_candidate - log_best) / n);
  row.change = row.ratio - 1;
  return row;
}

} // namespace

void set_paired_change(ClassRow &row, const std::vector<double> &log_ratios, double confidence) {
  Interval interval = t_interval(log_ratios, confidence);
  row.ratio = std::exp(interval.mean);
  row.change = row.ratio - 1;
  row.has_interval = true;
  row.low = std::exp(interval.low) - 1;
  row.high = std::exp(interval.high) - 1;
}

namespace {

// Side by side: in each round, the class's weighted mean of log(candidate median / BEST
// median) over its configs; the rounds are the independent samples of the paired t interval.
ClassRow compare_paired(const std::string &name, const std::vector<Pair> &pairs,
                        const std::vector<double> &weights, size_t rounds, double confidence) {
  std::vector<double> per_round(rounds, 0);
  double log_best = 0;
  double log_candidate = 0;
  double n = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    double w = weights.empty() ? 1.0 : weights[i];
    for (size_t k = 0; k < rounds; ++k) {
      per_round[k] += w * (std::log(util::median(pairs[i].second->rounds[k])) -
                           std::log(util::median(pairs[i].first->rounds[k])));
    }
    // Each config's time is profile::config_time_us, as every view of a class geomean has it.
    log_best += w * std::log(profile::config_time_us(*pairs[i].first, rounds));
    log_candidate += w * std::log(profile::config_time_us(*pairs[i].second, rounds));
    n += w;
  }
  for (double &d : per_round) {
    d /= n;
  }
  ClassRow row;
  row.config_class = name;
  row.configs = static_cast<int>(pairs.size());
  row.best_us = std::exp(log_best / n);
  row.candidate_us = std::exp(log_candidate / n);
  set_paired_change(row, per_round, confidence);
  return row;
}

} // namespace

void paired_state(ClassRow &row, double threshold) {
  if (row.high < -threshold || row.low > threshold) {
    row.state = row.high < 0 ? State::better : State::worse;
    return;
  }
  // Within the threshold an interval that excludes zero is shown (pending), never judged: a side
  // effect of the arrangement (an A/A kept on an H100 by two such intervals) excludes zero too.
  row.pending = row.excludes_zero();
}

namespace {

// A traffic row's times: per round (or once, `rounds` 0) the sums of count x median time of
// BEST and of the candidate; the change is that of the sum, its interval over the rounds.
ClassRow compare_traffic(const std::string &name, const std::vector<Pair> &pairs,
                         const std::vector<double> &counts, size_t rounds, double confidence) {
  ClassRow row;
  row.config_class = name;
  row.configs = static_cast<int>(pairs.size());
  if (rounds == 0) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      row.best_us += counts[i] * pairs[i].first->us;
      row.candidate_us += counts[i] * pairs[i].second->us;
    }
    row.ratio = row.candidate_us / row.best_us;
    row.change = row.ratio - 1;
    return row;
  }
  std::vector<double> per_round(rounds, 0);
  for (size_t k = 0; k < rounds; ++k) {
    double b = 0;
    double c = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      b += counts[i] * util::median(pairs[i].first->rounds[k]);
      c += counts[i] * util::median(pairs[i].second->rounds[k]);
    }
    row.best_us += b / static_cast<double>(rounds);
    row.candidate_us += c / static_cast<double>(rounds);
    per_round[k] = std::log(c / b);
  }
  set_paired_change(row, per_round, confidence);
  return row;
}

// The means noise rule (no interval): beyond the threshold at once, else a tie.
void means_state(ClassRow &row, double threshold) {
  if (std::abs(row.change) >= threshold) {
    row.state = row.change < 0 ? State::better : State::worse;
  }
}

// The traffic rows: each class's and the overall kernel time under the application's calls.
Traffic compare_traffic_classes(Classes &classes, const std::vector<Pair> &pairs, size_t rounds,
                                const Options &options) {
  Traffic t;
  for (double count : classes.all_counts) {
    t.calls += count;
  }
  auto state = [&](ClassRow &row) {
    rounds ? paired_state(row, options.threshold) : means_state(row, options.threshold);
  };
  t.overall = compare_traffic("overall", pairs, classes.all_counts, rounds, options.confidence);
  state(t.overall);
  for (const std::string &name : classes.order) {
    ClassRow row = compare_traffic(name, classes.pairs[name], classes.counts[name], rounds,
                                   options.confidence);
    row.share = row.best_us / t.overall.best_us;
    state(row);
    t.classes.push_back(row);
  }
  return t;
}

} // namespace

namespace detail {

using harness::config_label;

// The configs file's count column (calls per shape from kopt capture merge): its index, or -1.
std::ptrdiff_t count_column_of(const std::vector<std::string> &columns) {
  auto it = std::find(columns.begin(), columns.end(), "count");
  return it == columns.end() ? -1 : it - columns.begin();
}

// Side by side: the candidate's measurement names this BEST measurement as its partner, and
// both hold samples of the same rounds. Returns those rounds, or 0 when not side by side.
size_t side_by_side_rounds(const Measurement &best, const Measurement &candidate) {
  size_t rounds = best.sampled_rounds();
  bool side_by_side = !candidate.paired_best.empty() && candidate.paired_best == best.candidate &&
                      candidate.paired_best_hash == best.hash && rounds >= 2 &&
                      candidate.sampled_rounds() == rounds;
  return side_by_side ? rounds : 0;
}

// Groups `pairs` by class, with each one's `count_column` value (when not -1). Returns why a
// count is unusable, or "".
std::string group_by_class(const std::vector<Pair> &pairs, const std::vector<std::string> &columns,
                           std::ptrdiff_t count_column, Classes &classes) {
  for (const auto &[b, c] : pairs) {
    if (!classes.pairs.count(b->config_class)) {
      classes.order.push_back(b->config_class);
    }
    classes.pairs[b->config_class].emplace_back(b, c);
    if (count_column >= 0) {
      const std::string &text = b->values.at(static_cast<size_t>(count_column));
      double w = util::parse_double(text, "config " + config_label(columns, b->values) + ": count");
      if (!(w > 0)) {
        return "config " + config_label(columns, b->values) + ": count must be positive, got " +
               text;
      }
      classes.counts[b->config_class].push_back(w);
      classes.all_counts.push_back(w);
    }
  }
  return "";
}

// Each class's row and state, then the overall row, and the traffic rows when the configs carry
// counts; `rounds` 0 compares geomeans only.
void compare_classes(Decision &d, Classes &classes, const std::vector<Pair> &pairs, size_t rounds) {
  // Each class by its own interval (or, without rounds, its change) against the threshold alone:
  // an earlier decision confirms nothing, so deciding again is never a second draw at a keep.
  const Options &options = d.options;
  for (const std::string &name : classes.order) {
    ClassRow row = rounds ? compare_paired(name, classes.pairs[name], classes.weights(name), rounds,
                                           options.confidence)
                          : compare(name, classes.pairs[name], classes.weights(name));
    rounds ? paired_state(row, options.threshold) : means_state(row, options.threshold);
    d.classes.push_back(row);
  }
  std::vector<double> all_weights =
      classes.weigh_by_count ? classes.all_counts : std::vector<double>{};
  d.overall = rounds ? compare_paired("overall", pairs, all_weights, rounds, options.confidence)
                     : compare("overall", pairs, all_weights);
  // The overall row's own state; the verdict is judged on the classes.
  rounds ? paired_state(*d.overall, options.threshold) : means_state(*d.overall, options.threshold);
  if (!classes.all_counts.empty()) {
    d.traffic = compare_traffic_classes(classes, pairs, rounds, options);
  }
}

} // namespace detail

} // namespace kopt::decide
