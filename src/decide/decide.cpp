#include "decide/decide.hpp"

#include "buildinfo/build_flags.hpp"
#include "decide/stats.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <kopt/harness/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace kopt::decide {

namespace {

using profile::ConfigResult;
using profile::Measurement;

std::string percent(double fraction) { return util::format_number(fraction * 100, 4) + "%"; }

using harness::config_label;

// Lists at most `limit` items and says how many more there were, so a reason stays one line.
std::string list_some(const std::vector<std::string> &items, size_t limit = 8) {
  std::vector<std::string> shown(items.begin(),
                                 items.begin() + static_cast<long>(std::min(limit, items.size())));
  std::string text = util::join(shown, ", ");
  if (items.size() > limit) {
    text += ", and " + std::to_string(items.size() - limit) + " more";
  }
  return text;
}

// Harness time: the events backend, or a profiler that failed and left the harness's numbers.
// chrono is the host backend's own profiler, so it counts even then.
std::string effective_source(const Measurement &m) {
  if (m.measured_by == profile::Source::events ||
      (!m.profiled && m.measured_by != profile::Source::chrono)) {
    return "events";
  }
  return profile::to_string(m.measured_by);
}

// "a1b2c3d4e5f6 (-O3: c++ -O3 -DNDEBUG ...)": a build's hash, optimisation and flags.
std::string build_label(const Measurement &m) {
  buildinfo::BuildFlags build{m.build_flags, m.build};
  return m.build + " (" + build.optimisation() + ": " + util::excerpt(m.build_flags, 160) + ")";
}

Decision failed(Decision d, std::string reason) {
  d.verdict = Verdict::failed;
  d.reason = std::move(reason);
  return d;
}

bool same_direction(double a, double b) { return (a < 0 && b < 0) || (a > 0 && b > 0); }

using Pair = std::pair<const ConfigResult *, const ConfigResult *>;

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

void paired_state(ClassRow &row, double threshold, const std::vector<ClassRow> *previous,
                  const std::vector<ClassRow> *again) {
  if (row.high < -threshold || row.low > threshold) {
    row.state = row.high < 0 ? State::better : State::worse;
    return;
  }
  if (!row.excludes_zero()) {
    return;
  }
  bool faster = row.high < 0;
  for (const std::vector<ClassRow> *earlier : {previous, again}) {
    if (!earlier) {
      continue;
    }
    for (const ClassRow &seen : *earlier) {
      bool confirms = earlier == previous || seen.repeated;
      if (confirms && seen.config_class == row.config_class && seen.excludes_zero() &&
          (seen.high < 0) == faster) {
        row.state = faster ? State::better : State::worse;
        row.repeated = true;
        return;
      }
    }
  }
  row.pending = true;
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

std::string changes(const std::vector<const ClassRow *> &rows) {
  std::vector<std::string> parts;
  for (const ClassRow *row : rows) {
    parts.push_back(row->config_class + " " + format_change(row->change));
  }
  return util::join(parts, ", ");
}

void judge(Decision &d, const Measurement &candidate) {
  const Options &o = d.options;
  const std::vector<ClassRow> &rows = d.judged_classes();
  const ClassRow &overall =
      d.options.weighting == Weighting::traffic ? d.traffic->overall : *d.overall;
  std::vector<const ClassRow *> better;
  std::vector<const ClassRow *> worse;
  std::vector<const ClassRow *> beyond; // worse by more than max_regression
  const ClassRow *target = nullptr;
  std::vector<std::string> improved; // d.winning, for a split only
  for (const ClassRow &row : rows) {
    if (row.config_class == d.target) {
      target = &row;
    }
    if (row.state == State::better) {
      better.push_back(&row);
      improved.push_back(row.config_class);
    } else if (row.state == State::worse) {
      worse.push_back(&row);
    }
    if (row.change > o.max_regression) {
      beyond.push_back(&row);
    }
  }
  bool global = d.target == "global";
  std::string limit = percent(o.max_regression);

  if (global && better.size() == rows.size()) {
    d.verdict = Verdict::keep;
    d.reason = "every class improved beyond noise (overall " + format_change(overall.change) + ")";
    return;
  }
  if (!global && target->state == State::better && beyond.empty()) {
    d.verdict = Verdict::keep;
    d.reason = "target " + d.target + " improved " + format_change(target->change) +
               ", no other class regressed more than " + limit;
    return;
  }
  if (!better.empty() && !beyond.empty()) {
    d.verdict = Verdict::split;
    d.winning = improved;
    d.reason = util::join(d.winning, ", ") + " improved beyond noise while " + changes(beyond) +
               " regressed more than " + limit;
    std::set<std::string> kernels;
    std::set<std::string> winning(d.winning.begin(), d.winning.end());
    for (const ConfigResult &c : candidate.configs) {
      if (winning.count(c.config_class) && !c.kernel.empty()) {
        kernels.insert(c.kernel);
      }
    }
    d.split_advice =
        "dispatch " + util::join(d.winning, ", ") + " to candidate " + d.candidate + "'s kernel" +
        (kernels.empty() ? std::string()
                         : " (" + util::join({kernels.begin(), kernels.end()}, ", ") + ")") +
        " and keep the other classes on BEST " + d.best + "'s";
    return;
  }
  if (!global && target->state == State::worse) {
    d.verdict = Verdict::regression;
    d.reason = "target " + d.target + " regressed " + format_change(target->change);
    return;
  }
  if (better.empty() && !worse.empty()) {
    d.verdict = Verdict::regression;
    d.reason = "no class improved beyond noise; worse: " + changes(worse);
    return;
  }
  d.verdict = Verdict::tie;
  if (global && !better.empty()) {
    std::vector<const ClassRow *> rest;
    for (const ClassRow &row : rows) {
      if (row.state != State::better) {
        rest.push_back(&row);
      }
    }
    d.reason = "target global needs every class to improve; improved: " + changes(better) +
               "; not: " + changes(rest);
  } else if (global) {
    d.reason = "no class changed beyond noise (overall " + format_change(overall.change) + ")";
  } else {
    d.reason = "target " + d.target + " within noise (" + format_change(target->change) + ")";
    if (!better.empty()) {
      d.reason += "; improved elsewhere: " + changes(better);
    }
  }
}

// The decision's identity: who is compared with whom, on which target, under which options.
Decision describe(const Measurement &best, const Measurement &candidate, const Request &request,
                  const Options &options) {
  Decision d;
  d.family = candidate.family.empty() ? best.family : candidate.family;
  d.candidate = candidate.candidate;
  // A candidate that printed no hash (it failed first) is bound to the content it was decided for.
  d.hash = candidate.hash.empty() ? request.expected_hash : candidate.hash;
  d.best = best.candidate;
  d.best_hash = best.hash;
  d.target = request.target.empty() ? "global" : request.target;
  d.date = candidate.date;
  d.measured_by = profile::to_string(candidate.measured_by);
  d.build = candidate.build;
  d.build_flags = candidate.build_flags;
  d.configs = static_cast<int>(candidate.configs.size());
  d.configs_hash = candidate.configs_hash;
  d.arrangement = candidate.arrangement;
  d.options = options;
  return d;
}

// Measurements that cannot be compared at all, or a candidate that is not the code it claims to
// be: returns the decision that says so.
std::optional<Decision> refuse_inputs(const Decision &d, const Measurement &best,
                                      const Measurement &candidate, const Request &request) {
  auto candidate_failed = [&] {
    return failed(d, "candidate " + candidate.candidate + " failed: " +
                         (candidate.reason.empty() ? "no reason given" : candidate.reason));
  };
  // Both failed, the candidate first (candidate-first, round 1): its reason is the one to tell.
  if (!best.ok() && !candidate.ok() && best.hash.empty()) {
    return candidate_failed();
  }
  if (!best.ok()) {
    return failed(d, "BEST " + best.candidate + " has no usable measurement: " + best.reason);
  }
  if (!request.best_hash.empty() && best.hash != request.best_hash) {
    return failed(d, "BEST " + best.candidate + "'s measurement has hash " + best.hash +
                         ", expected " + request.best_hash);
  }
  if (!candidate.ok()) {
    return candidate_failed();
  }
  if (!best.family.empty() && !candidate.family.empty() && best.family != candidate.family) {
    return failed(d,
                  "families differ: BEST is " + best.family + ", candidate is " + candidate.family);
  }
  if (candidate.config_columns != best.config_columns) {
    return failed(d, "configs differ from BEST's: columns " +
                         util::join(candidate.config_columns, ",") + " vs BEST's " +
                         util::join(best.config_columns, ","));
  }
  if (!request.expected_hash.empty() && candidate.hash != request.expected_hash) {
    Decision incorrect = d;
    incorrect.verdict = Verdict::incorrect;
    incorrect.reason = "hash mismatch: the harness printed " + candidate.hash + ", candidate " +
                       candidate.candidate + "'s content hash is " + request.expected_hash +
                       " (the build did not use the candidate's sources)";
    return incorrect;
  }
  return std::nullopt;
}

// BEST's configs paired with the candidate's results.
struct Pairing {
  std::vector<Pair> pairs;
  std::vector<std::string> missing; ///< BEST's configs the candidate has no result for
  /// The candidate's results no BEST config took, by config values.
  std::map<std::vector<std::string>, std::vector<size_t>> unpaired;
};

// Pairs each BEST config with the candidate's result for the same values (in order, so a
// config listed twice pairs with its second occurrence).
Pairing pair_configs(const Measurement &best, const Measurement &candidate) {
  Pairing p;
  for (size_t i = candidate.configs.size(); i-- > 0;) {
    p.unpaired[candidate.configs[i].values].push_back(i);
  }
  for (const ConfigResult &b : best.configs) {
    auto it = p.unpaired.find(b.values);
    if (it == p.unpaired.end() || it->second.empty()) {
      p.missing.push_back(config_label(best.config_columns, b.values));
      continue;
    }
    p.pairs.emplace_back(&b, &candidate.configs[it->second.back()]);
    it->second.pop_back();
  }
  return p;
}

// The correctness rule over the paired results: every config has one, and each is_correct().
std::optional<Decision> refuse_incorrect(const Decision &decision, const Pairing &p,
                                         const Measurement &best) {
  Decision d = decision;
  d.verdict = Verdict::incorrect;
  if (!p.missing.empty()) {
    d.reason = "no result for " + std::to_string(p.missing.size()) + " of " +
               std::to_string(best.configs.size()) + " configs: " + list_some(p.missing);
    return d;
  }
  std::vector<std::string> wrong;
  for (const auto &[b, c] : p.pairs) {
    if (!is_correct(*c)) {
      std::string label = config_label(best.config_columns, c->values);
      d.incorrect.push_back({label, c->err, c->err_known});
      wrong.push_back(label + " (" +
                      (c->err_known ? "err " + util::format_number(c->err) : "err not compared") +
                      (c->check.empty() ? "" : ": " + c->check) + ")");
    }
  }
  if (!wrong.empty()) {
    d.reason = std::to_string(wrong.size()) + " of " + std::to_string(p.pairs.size()) +
               " configs have err != 0: " + list_some(wrong);
    return d;
  }
  return std::nullopt;
}

// A candidate whose timed runs went unchecked (the family's harness gives no reference) could
// have done any work, or none: no verdict but failed.
std::optional<Decision> refuse_unchecked(const Decision &decision, const Pairing &p,
                                         const Measurement &best) {
  std::vector<std::string> unchecked;
  for (const auto &[b, c] : p.pairs) {
    if (c->checked == 0) {
      unchecked.push_back(config_label(best.config_columns, c->values));
    }
  }
  if (unchecked.empty()) {
    return std::nullopt;
  }
  return failed(decision, "the timed runs of " + std::to_string(unchecked.size()) + " of " +
                              std::to_string(p.pairs.size()) + " configs were not checked (" +
                              list_some(unchecked) +
                              "): the family's harness gives no reference "
                              "(Problem::check_output), and an unchecked run proves no work");
}

// Returns why the paired results cannot be compared (extra configs, a config whose class or time
// is off, different devices or timing sources), or "" when they can.
std::string not_comparable(const Pairing &p, const Options &options, const Measurement &best,
                           const Measurement &candidate) {
  const auto &columns = best.config_columns;
  std::vector<std::string> extra;
  for (const auto &[values, left] : p.unpaired) {
    for (size_t i = 0; i < left.size(); ++i) {
      extra.push_back(config_label(columns, values));
    }
  }
  if (!extra.empty()) {
    return "configs differ from BEST's: the candidate also ran " + list_some(extra);
  }
  for (const auto &[b, c] : p.pairs) {
    std::string label = config_label(columns, b->values);
    if (b->config_class != c->config_class) {
      return "config " + label + " is class " + b->config_class + " for BEST but " +
             c->config_class + " for the candidate";
    }
    for (const auto &[m, us] : {std::pair{&best, b->us}, std::pair{&candidate, c->us}}) {
      if (!(us > 0) || !std::isfinite(us)) {
        return "config " + label + " has no time in " + m->candidate +
               "'s measurement (us = " + util::format_number(us) + ")";
      }
    }
  }
  if (!best.device.empty() && !candidate.device.empty() && best.device != candidate.device) {
    return "measured on different devices: BEST on " + best.device + ", candidate on " +
           candidate.device;
  }
  // A build's flags make its times: an unoptimised build's are no measure of an optimised one's.
  if (!best.build.empty() && !candidate.build.empty() && best.build != candidate.build &&
      options.mixed_builds == MixedBuilds::refuse) {
    return "not comparable: BEST measured build " + build_label(best) + ", candidate build " +
           build_label(candidate) + " (compare them anyway with --allow-mixed-builds)";
  }
  std::string best_source = effective_source(best);
  std::string candidate_source = effective_source(candidate);
  // Timers differ in what they count (ncu's kernel time holds about 1 us that the tracer's does
  // not): compared only when asked, and the verdict says so.
  if (best_source != candidate_source && options.mixed_timers == MixedTimers::refuse) {
    std::string why = "not comparable: BEST measured by " + best_source + ", candidate by " +
                      candidate_source + " (compare them anyway with --allow-mixed-timers)";
    // A profiler that failed on one side says why (a refused trace names what it found).
    for (const auto &[who, m] : {std::pair{"BEST", &best}, std::pair{"candidate", &candidate}}) {
      if (!m->profiled && !m->reason.empty()) {
        why += "; " + std::string(who) + "'s times: " + util::excerpt(m->reason, 300);
      }
    }
    return why;
  }
  return "";
}

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

// The pairs by BEST's config class, in the order classes first appear, with their counts.
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

// The means noise rule: beyond the threshold at once; within it when the previous decision's
// rows saw the same direction.
void means_state(ClassRow &row, double threshold, const std::vector<ClassRow> *previous) {
  if (std::abs(row.change) >= threshold) {
    row.state = row.change < 0 ? State::better : State::worse;
  } else if (previous) {
    for (const ClassRow &seen : *previous) {
      if (seen.config_class == row.config_class && same_direction(seen.change, row.change)) {
        row.state = row.change < 0 ? State::better : State::worse;
        row.repeated = true;
      }
    }
  }
}

// The earlier rows that may confirm a change within the threshold (see paired_state).
struct Earlier {
  const std::vector<ClassRow> *previous = nullptr;
  const std::vector<ClassRow> *again = nullptr;
};

// The traffic rows: each class's and the overall kernel time under the application's calls.
Traffic compare_traffic_classes(Classes &classes, const std::vector<Pair> &pairs, size_t rounds,
                                const Options &options, const Earlier &earlier) {
  Traffic t;
  for (double count : classes.all_counts) {
    t.calls += count;
  }
  auto state = [&](ClassRow &row, const Earlier &e) {
    rounds ? paired_state(row, options.noise, e.previous, e.again)
           : means_state(row, options.noise, e.previous);
  };
  t.overall = compare_traffic("overall", pairs, classes.all_counts, rounds, options.confidence);
  state(t.overall, {});
  for (const std::string &name : classes.order) {
    ClassRow row = compare_traffic(name, classes.pairs[name], classes.counts[name], rounds,
                                   options.confidence);
    row.share = row.best_us / t.overall.best_us;
    state(row, earlier);
    t.classes.push_back(row);
  }
  return t;
}

// Each class's row and state, then the overall row, and the traffic rows when the configs carry
// counts; `rounds` 0 compares geomeans only.
void compare_classes(Decision &d, Classes &classes, const std::vector<Pair> &pairs, size_t rounds,
                     const Request &request) {
  // The previous decision counts only for a new measurement (another date) of the same code
  // against the same BEST: deciding the same measurement twice must not confirm itself.
  // Deciding it again keeps what the first decision of it confirmed. Side by side, it counts
  // only when made in the other arrangement: a side effect within the threshold that favours
  // the side that starts first then shows on opposite sides of zero, and never confirms itself.
  const Decision *previous = nullptr;
  const Decision *again = nullptr;
  if (request.previous && request.previous->candidate == d.candidate &&
      request.previous->hash == d.hash && request.previous->best == d.best &&
      request.previous->best_hash == d.best_hash) {
    bool other_arrangement =
        !rounds || (!d.arrangement.empty() && !request.previous->arrangement.empty() &&
                    request.previous->arrangement != d.arrangement);
    if (request.previous->date == d.date) {
      again = &*request.previous;
    } else if (other_arrangement) {
      previous = &*request.previous;
    }
  }
  auto rows_of = [](const Decision *decision, bool traffic) -> const std::vector<ClassRow> * {
    if (!decision) {
      return nullptr;
    }
    if (traffic) {
      return decision->traffic ? &decision->traffic->classes : nullptr;
    }
    return &decision->classes;
  };
  const Options &options = d.options;
  for (const std::string &name : classes.order) {
    if (rounds) {
      ClassRow row = compare_paired(name, classes.pairs[name], classes.weights(name), rounds,
                                    options.confidence);
      paired_state(row, options.noise, rows_of(previous, false), rows_of(again, false));
      d.classes.push_back(row);
      continue;
    }
    ClassRow row = compare(name, classes.pairs[name], classes.weights(name));
    means_state(row, options.noise, rows_of(previous, false));
    d.classes.push_back(row);
  }
  std::vector<double> all_weights =
      classes.weigh_by_count ? classes.all_counts : std::vector<double>{};
  d.overall = rounds ? compare_paired("overall", pairs, all_weights, rounds, options.confidence)
                     : compare("overall", pairs, all_weights);
  // The overall row's own state, by the threshold rule alone: all configs together are no
  // class an earlier measurement confirms, and the verdict is judged on the classes.
  if (rounds) {
    paired_state(*d.overall, options.noise, nullptr, nullptr);
  } else {
    means_state(*d.overall, options.noise, nullptr);
  }
  if (!classes.all_counts.empty()) {
    d.traffic = compare_traffic_classes(classes, pairs, rounds, options,
                                        {rows_of(previous, true), rows_of(again, true)});
  }
}

// A threshold below what this machine resolves (kopt calibrate) on the measured device.
void add_resolution_notes(Decision &d, const Request &request, const Classes &classes,
                          const std::string &device) {
  if (!request.calibration || request.calibration->device != device) {
    return;
  }
  for (const Resolution &r : request.calibration->classes) {
    if (r.half_width > d.options.noise && classes.pairs.count(r.config_class)) {
      d.notes.push_back("the threshold " + format_change(d.options.noise).substr(1) +
                        " is below this machine's resolution for " + r.config_class + " (" +
                        format_change(r.half_width).substr(1) + ", kopt calibrate on " +
                        request.calibration->date + "): only changes beyond it can show there");
    }
  }
}

} // namespace

const char *to_string(Verdict verdict) {
  switch (verdict) {
  case Verdict::keep:
    return "keep";
  case Verdict::tie:
    return "tie";
  case Verdict::regression:
    return "regression";
  case Verdict::split:
    return "split";
  case Verdict::incorrect:
    return "incorrect";
  case Verdict::failed:
    return "failed";
  }
  return "?";
}

Verdict parse_verdict(const std::string &text, const std::string &where) {
  for (Verdict v : {Verdict::keep, Verdict::tie, Verdict::regression, Verdict::split,
                    Verdict::incorrect, Verdict::failed}) {
    if (text == to_string(v)) {
      return v;
    }
  }
  throw Error(where + ": expected one of keep, tie, regression, split, incorrect, failed, got '" +
              text + "'");
}

const char *to_string(Method method) { return method == Method::paired ? "paired" : "means"; }

const char *to_string(Weighting weighting) {
  switch (weighting) {
  case Weighting::equal:
    return "equal";
  case Weighting::count:
    return "count";
  case Weighting::traffic:
    return "traffic";
  }
  return "?";
}

const std::vector<ClassRow> &Decision::judged_classes() const {
  return options.weighting == Weighting::traffic && traffic ? traffic->classes : classes;
}

bool Decision::counts_as_regression() const {
  if (verdict != Verdict::regression) {
    return false;
  }
  for (const ClassRow &row : judged_classes()) {
    if (row.state == State::worse && !row.repeated) {
      return true;
    }
  }
  return false;
}

const char *to_string(State state) {
  switch (state) {
  case State::better:
    return "better";
  case State::worse:
    return "worse";
  case State::tie:
    return "tie";
  }
  return "?";
}

State parse_state(const std::string &text, const std::string &where) {
  if (text == "better") {
    return State::better;
  }
  if (text == "worse") {
    return State::worse;
  }
  if (text == "tie" || text.empty()) {
    return State::tie;
  }
  throw Error(where + ": expected one of better, worse, tie, got '" + text + "'");
}

std::string format_interval(double low, double high) {
  return "[" + format_change(low) + ", " + format_change(high) + "]";
}

std::string format_change(double change) {
  char text[32];
  double percent = change * 100;
  // A change that rounds to zero prints as +0.00%, never -0.00%.
  std::snprintf(text, sizeof text, "%+.2f%%", std::abs(percent) < 0.005 ? 0.0 : percent);
  return text;
}

bool is_correct(const ConfigResult &config) { return config.err_known && config.err == 0; }

std::vector<std::string> correctness_problems(const Measurement &m, const std::string &id,
                                              const std::string &expected_hash) {
  std::vector<std::string> problems;
  if (!m.ok()) {
    problems.push_back("failed: " + m.reason);
    return problems;
  }
  if (m.hash != expected_hash) {
    problems.push_back("identity: the harness printed hash '" + m.hash + "', candidate " + id +
                       "'s sources hash to " + expected_hash + " (a stale or foreign binary)");
  }
  std::vector<std::string> wrong;
  for (const auto &c : m.configs) {
    if (is_correct(c)) {
      continue;
    }
    std::string config = config_label(m.config_columns, c.values);
    if (!c.check.empty()) {
      wrong.push_back(config + ": err " + util::format_number(c.err, 4) + ": " + c.check +
                      " (kernel " + c.kernel + ")");
    } else if (!c.err_known) {
      wrong.push_back(config + ": no error reported (was the golden compared?)");
    } else {
      wrong.push_back(config + ": err " + util::format_number(c.err, 4) + " (kernel " + c.kernel +
                      ")");
    }
  }
  if (!wrong.empty()) {
    problems.push_back("incorrect: " + std::to_string(wrong.size()) + " of " +
                       std::to_string(m.configs.size()) + " configs have err != 0:\n    " +
                       util::join(wrong, "\n    "));
  }
  return problems;
}

namespace {

std::string shown(const std::string &value) { return value.empty() ? "(none)" : value; }

[[noreturn]] void refuse_field(const std::string &file, const std::string &field,
                               const std::string &expected, const std::string &got,
                               const std::string &why, const std::string &remedy) {
  throw Error(file + ": " + field + ": expected " + shown(expected) + ", got " + shown(got) + ": " +
              why + "; " + remedy);
}

} // namespace

void check_measured(const Measurement &m, const std::string &file, const Identity &expected,
                    const Identity &best, const std::string &remedy) {
  if (m.candidate != expected.id) {
    refuse_field(file, "candidate", expected.id, m.candidate, "a measurement of another candidate",
                 remedy);
  }
  // A harness that failed before it printed its hash leaves none; any hash it printed must be
  // the content's now.
  bool printed = !m.hash.empty() || m.ok();
  if (!expected.hash.empty() && printed && m.hash != expected.hash) {
    refuse_field(file, "hash", expected.hash, m.hash,
                 "measured from other content than candidate " + expected.id + "'s now", remedy);
  }
  if (m.paired_best.empty()) {
    return;
  }
  if (m.paired_best != best.id) {
    refuse_field(file, "paired_best", best.id, m.paired_best,
                 "measured beside another candidate than BEST", remedy);
  }
  // A candidate that failed in the first round, before BEST's harness ran (candidate-first),
  // was measured beside no BEST hash: it is decided as failed, never kept.
  bool best_ran = !m.paired_best_hash.empty() || m.ok();
  if (!best.hash.empty() && best_ran && m.paired_best_hash != best.hash) {
    refuse_field(file, "paired_best_hash", best.hash, m.paired_best_hash,
                 "measured beside other content than BEST " + best.id + "'s", remedy);
  }
}

namespace {

// The candidate's kernels outside kernel_regex over all its configs, in first-seen order.
std::vector<OutsideKernel> outside_regex(const Measurement &m) {
  std::vector<OutsideKernel> found;
  std::vector<double> shared_us;
  std::vector<double> total_us;
  for (const profile::ConfigResult &c : m.configs) {
    for (const profile::OutsideKernel &k : c.outside_regex) {
      auto it = std::find_if(found.begin(), found.end(),
                             [&](const OutsideKernel &o) { return o.kernel == k.kernel; });
      size_t at = static_cast<size_t>(it - found.begin());
      if (it == found.end()) {
        found.push_back({k.kernel, 0, 0});
        shared_us.push_back(0);
        total_us.push_back(0);
      }
      found[at].configs += 1;
      shared_us[at] += k.share * c.us;
      total_us[at] += c.us;
    }
  }
  for (size_t i = 0; i < found.size(); ++i) {
    found[i].share = total_us[i] > 0 ? shared_us[i] / total_us[i] : 0;
  }
  return found;
}

// "helper_work (98.7% of the time of 73 configs), memset_kernel (0.4% of the time of 1 config)"
std::string describe_outside(const std::vector<OutsideKernel> &kernels) {
  std::vector<std::string> parts;
  for (const OutsideKernel &k : kernels) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100 * k.share);
    parts.push_back(k.kernel + " (" + share + " of the time of " + std::to_string(k.configs) +
                    (k.configs == 1 ? " config)" : " configs)"));
  }
  return list_some(parts, 5);
}

Decision decide_measured(const Measurement &best, const Measurement &candidate,
                         const Request &request, const Options &options) {
  Decision d = describe(best, candidate, request, options);
  if (!request.identical_to.empty()) {
    d.identical_to = request.identical_to;
    d.verdict = Verdict::tie;
    d.reason = "identical to " + request.identical_to + " (hash " + request.expected_hash +
               "): not measured as a change, not counted";
    return d;
  }
  if (std::optional<Decision> refused = refuse_inputs(d, best, candidate, request)) {
    return *refused;
  }
  Pairing pairing = pair_configs(best, candidate);
  if (std::optional<Decision> refused = refuse_incorrect(d, pairing, best)) {
    return *refused;
  }
  if (std::optional<Decision> refused = refuse_unchecked(d, pairing, best)) {
    return *refused;
  }
  if (std::string why = not_comparable(pairing, options, best, candidate); !why.empty()) {
    return failed(d, why);
  }
  const auto &columns = best.config_columns;
  std::ptrdiff_t count_column = count_column_of(columns);
  if (count_column < 0 && options.weighting != Weighting::equal) {
    return failed(d, std::string("weighting by ") + to_string(options.weighting) +
                         " needs a 'count' column in the configs (columns: " +
                         util::join(columns, ", ") + "); make one with kopt capture merge");
  }
  size_t rounds = side_by_side_rounds(best, candidate);
  d.method = rounds ? Method::paired : Method::means;
  d.rounds = static_cast<int>(rounds);
  Classes classes;
  classes.weigh_by_count = options.weighting == Weighting::count;
  if (std::string why = group_by_class(pairing.pairs, columns, count_column, classes);
      !why.empty()) {
    return failed(d, why);
  }
  if (d.target != "global" && !classes.pairs.count(d.target)) {
    return failed(d, "target class '" + d.target +
                         "' is not a config class of this measurement (classes: " +
                         util::join(classes.order, ", ") + ")");
  }
  if (pairing.pairs.empty()) {
    return failed(d, "BEST " + best.candidate + "'s measurement has no configs");
  }
  compare_classes(d, classes, pairing.pairs, rounds, request);
  add_resolution_notes(d, request, classes, best.device);

  if (d.candidate == d.best) {
    // BEST is what the loop keeps, so its keep test passes (a kept candidate stays green).
    d.verdict = Verdict::keep;
    d.reason = "candidate is BEST";
    return d;
  }
  if (effective_source(best) == "events" && options.harness_time == HarnessTime::refuse) {
    return failed(d, "harness time alone never keeps a candidate: both measurements are "
                     "events timings (allow them with --allow-harness-time)");
  }
  judge(d, candidate);
  if (options.weighting == Weighting::traffic) {
    d.reason += "; judged on the traffic-weighted classes";
  }
  if (effective_source(best) != effective_source(candidate)) {
    d.reason += "; timers differ (BEST measured by " + effective_source(best) + ", candidate by " +
                effective_source(candidate) + "), compared as asked";
  }
  if (!best.build.empty() && !candidate.build.empty() && best.build != candidate.build) {
    d.reason += "; builds differ (BEST " + build_label(best) + ", candidate " +
                build_label(candidate) + "), compared as asked";
  }
  return d;
}

} // namespace

Decision decide(const Measurement &best, const Measurement &candidate, const Request &request,
                const Options &options) {
  Decision d = decide_measured(best, candidate, request, options);
  if (request.roofline) {
    apply_roofline(d, best, candidate, *request.roofline);
  }
  // Work outside the family's kernels is counted, never hidden; the verdict says where it went.
  d.outside_regex = outside_regex(candidate);
  if (!d.outside_regex.empty()) {
    d.reason += "; counted kernels outside kernel_regex: " + describe_outside(d.outside_regex);
  }
  return d;
}

profile::Measurement missing_measurement(const std::string &candidate,
                                         const std::filesystem::path &path) {
  profile::Measurement m;
  m.candidate = candidate;
  m.status = "failed";
  m.reason = "no measurement: " + path.string() + " does not exist";
  return m;
}

namespace {

// A table row's state column: "better", with `*` when repeated and `?` when pending.
std::string state_mark(const ClassRow &row) {
  return std::string(to_string(row.state)) + (row.repeated ? "*" : "") + (row.pending ? "?" : "");
}

// Appends `line` without its trailing blanks, and a newline.
void append_line(std::string &text, std::string line) {
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  text += line + "\n";
}

} // namespace

std::string format_table(const Decision &d) {
  if (d.classes.empty()) {
    return "";
  }
  size_t width = std::string("overall").size();
  for (const ClassRow &row : d.classes) {
    width = std::max(width, row.config_class.size());
  }
  bool paired = d.method == Method::paired;
  std::string text;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %7s %12s %12s %8s %9s %s %s\n", static_cast<int>(width),
                "class", "configs", "best us", "cand us", "ratio", "change",
                paired ? " interval            " : "", "state");
  text += line;
  bool repeated = false;
  bool pending = false;
  auto add = [&](const ClassRow &row, const std::string &state) {
    std::string interval;
    if (row.has_interval) {
      interval = " " + format_interval(row.low, row.high);
      interval.resize(std::max<size_t>(interval.size(), 21), ' ');
    } else if (paired) {
      interval = std::string(21, ' ');
    }
    std::snprintf(line, sizeof line, "%-*s %7d %12.3f %12.3f %8.4f %9s%s  %s",
                  static_cast<int>(width), row.config_class.c_str(), row.configs, row.best_us,
                  row.candidate_us, row.ratio, format_change(row.change).c_str(), interval.c_str(),
                  state.c_str());
    append_line(text, line);
  };
  for (const ClassRow &row : d.classes) {
    repeated = repeated || row.repeated;
    pending = pending || row.pending;
    add(row, state_mark(row));
  }
  if (d.overall) {
    add(*d.overall, "");
  }
  std::string threshold = format_change(d.options.noise).substr(1);
  if (paired) {
    text += "intervals: " + util::format_number(d.options.confidence * 100, 4) + "% over " +
            std::to_string(d.rounds) + " side-by-side rounds" +
            (d.arrangement.empty() ? "" : " (" + d.arrangement + ")") + "; threshold " + threshold +
            "\n";
  } else {
    text += "unpaired: BEST and the candidate were not measured side by side with samples "
            "(decided on geomeans, threshold " +
            threshold + ")\n";
  }
  if (repeated) {
    text += paired ? "* within the threshold, counted: the interval excludes zero here and in the "
                     "previous side-by-side measurement, made in the other arrangement\n"
                   : "* within noise, counted: the previous decision saw the same direction\n";
  }
  if (pending) {
    text += "? within the threshold, the interval excludes zero: counted if the next "
            "side-by-side measurement, made in the other arrangement, shows it too\n";
  }
  for (const std::string &note : d.notes) {
    text += "note: " + note + "\n";
  }
  return text;
}

std::string format_traffic(const Decision &d) {
  if (!d.traffic) {
    return "";
  }
  const Traffic &t = *d.traffic;
  size_t width = std::string("overall").size();
  for (const ClassRow &row : t.classes) {
    width = std::max(width, row.config_class.size());
  }
  std::string text = "traffic: each config weighs its calls per application run (count, " +
                     util::format_number(t.calls, 12) + " calls) x its time" +
                     (d.options.weighting == Weighting::traffic ? "; the verdict's rows" : "") +
                     "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %7s %12s %12s %9s %s %s\n", static_cast<int>(width),
                "class", "share", "best us/run", "cand us/run", "change", " interval            ",
                "state");
  text += line;
  auto add = [&](const ClassRow &row, const std::string &state) {
    std::string interval = row.has_interval ? " " + format_interval(row.low, row.high) : "";
    interval.resize(std::max<size_t>(interval.size(), 21), ' ');
    std::snprintf(line, sizeof line, "%-*s %6.1f%% %12.1f %12.1f %9s%s  %s",
                  static_cast<int>(width), row.config_class.c_str(), 100 * row.share, row.best_us,
                  row.candidate_us, format_change(row.change).c_str(), interval.c_str(),
                  state.c_str());
    append_line(text, line);
  };
  for (const ClassRow &row : t.classes) {
    add(row, state_mark(row));
  }
  ClassRow overall = t.overall;
  overall.share = 1;
  add(overall, "");
  text += "the application's kernel time: " + format_change(t.overall.change) +
          (t.overall.has_interval ? " " + format_interval(t.overall.low, t.overall.high)
                                  : std::string()) +
          " (" + util::format_number(t.overall.best_us, 6) + " us per run for BEST)\n";
  return text;
}

std::string format_verdict(const Decision &d) {
  std::string text = std::string("verdict: ") + to_string(d.verdict) + " (" + d.reason + ")\n";
  if (!d.split_advice.empty()) {
    text += "split advice: " + d.split_advice + "\n";
  }
  return text;
}

nlohmann::json to_json(const Decision &d) {
  auto row_json = [](const ClassRow &row) {
    return nlohmann::json{
        {"class", row.config_class},
        {"configs", row.configs},
        {"best_us", row.best_us},
        {"candidate_us", row.candidate_us},
        {"ratio", row.ratio},
        {"change", row.change},
        {"state", to_string(row.state)},
        {"repeated", row.repeated},
        {"pending", row.pending},
        {"low", row.has_interval ? nlohmann::json(row.low) : nlohmann::json(nullptr)},
        {"high", row.has_interval ? nlohmann::json(row.high) : nlohmann::json(nullptr)}};
  };
  nlohmann::json traffic = nullptr;
  if (d.traffic) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ClassRow &row : d.traffic->classes) {
      rows.push_back(row_json(row));
      rows.back()["share"] = row.share;
    }
    traffic = {
        {"calls", d.traffic->calls}, {"classes", rows}, {"overall", row_json(d.traffic->overall)}};
  }
  nlohmann::json classes = nlohmann::json::array();
  for (const ClassRow &row : d.classes) {
    classes.push_back(row_json(row));
  }
  nlohmann::json incorrect = nlohmann::json::array();
  for (const ConfigError &e : d.incorrect) {
    incorrect.push_back({{"config", e.config},
                         {"err", e.err_known ? nlohmann::json(e.err) : nlohmann::json(nullptr)}});
  }
  nlohmann::json outside = nlohmann::json::array();
  for (const OutsideKernel &k : d.outside_regex) {
    outside.push_back({{"kernel", k.kernel}, {"share", k.share}, {"configs", k.configs}});
  }
  nlohmann::json light = d.speed_of_light ? to_json(*d.speed_of_light) : nlohmann::json(nullptr);
  return {{"family", d.family},
          {"candidate", d.candidate},
          {"hash", d.hash},
          {"best", d.best},
          {"best_hash", d.best_hash},
          {"target", d.target},
          {"date", d.date},
          {"measured_by", d.measured_by},
          {"build", d.build},
          {"build_flags", d.build_flags},
          {"configs", d.configs},
          {"configs_hash", d.configs_hash},
          {"arrangement", d.arrangement},
          {"method", to_string(d.method)},
          {"rounds", d.rounds},
          {"noise", d.options.noise},
          {"confidence", d.options.confidence},
          {"max_regression", d.options.max_regression},
          {"allow_harness_time", d.options.harness_time == HarnessTime::allow},
          {"allow_mixed_timers", d.options.mixed_timers == MixedTimers::allow},
          {"allow_mixed_builds", d.options.mixed_builds == MixedBuilds::allow},
          {"weighting", to_string(d.options.weighting)},
          {"verdict", to_string(d.verdict)},
          {"reason", d.reason},
          {"classes", classes},
          {"winning", d.winning},
          {"split_advice", d.split_advice},
          {"incorrect", incorrect},
          {"overall", d.overall ? row_json(*d.overall) : nlohmann::json(nullptr)},
          {"traffic", traffic},
          {"identical_to", d.identical_to},
          {"counts_as_regression", d.counts_as_regression()},
          {"notes", d.notes},
          {"outside_kernel_regex", outside},
          {"speed_of_light", light}};
}

namespace {

constexpr double kMaxNumber = std::numeric_limits<double>::max();

// Returns j[key] as a finite number in [low, high] (read back by record: a NaN or negative
// threshold or time would decide nothing the way it claims to).
double number_in(const nlohmann::json &j, const char *key, double low, double high,
                 const std::string &where) {
  double value = util::json_field<double>(j, key, where);
  if (!std::isfinite(value) || value < low || value > high) {
    std::string range = high == kMaxNumber ? ">= " + util::format_number(low)
                                           : "in [" + util::format_number(low) + ", " +
                                                 util::format_number(high) + "]";
    throw Error(where + ": " + key + ": expected a finite number " + range + ", got " +
                util::format_number(value));
  }
  return value;
}

ClassRow row_from_json(const nlohmann::json &j, const std::string &where) {
  ClassRow row;
  row.config_class = util::json_field<std::string>(j, "class", where);
  row.configs = static_cast<int>(util::json_int_in(j, "configs", 0, INT32_MAX, where));
  row.best_us = number_in(j, "best_us", 0, kMaxNumber, where);
  row.candidate_us = number_in(j, "candidate_us", 0, kMaxNumber, where);
  row.ratio = number_in(j, "ratio", 0, kMaxNumber, where);
  row.change = number_in(j, "change", -1, kMaxNumber, where);
  row.state = parse_state(util::json_field<std::string>(j, "state", where), where + ": state");
  row.repeated = util::json_field<bool>(j, "repeated", where);
  // Written since decisions are paired; older decisions lack them and still load.
  row.pending = util::json_field_or<bool>(j, "pending", false, where);
  auto low = util::json_field_or<nlohmann::json>(j, "low", nullptr, where);
  auto high = util::json_field_or<nlohmann::json>(j, "high", nullptr, where);
  row.has_interval = !low.is_null() && !high.is_null();
  if (row.has_interval) {
    row.low = number_in(j, "low", -1, kMaxNumber, where);
    row.high = number_in(j, "high", row.low, kMaxNumber, where);
  }
  return row;
}

Weighting weighting_from_json(const nlohmann::json &j, const std::string &source) {
  std::string text = util::json_field_or<std::string>(j, "weighting", "equal", source);
  for (Weighting w : {Weighting::equal, Weighting::count, Weighting::traffic}) {
    if (text == to_string(w)) {
      return w;
    }
  }
  throw Error(source + ": weighting: expected one of equal, count, traffic, got '" + text + "'");
}

Traffic traffic_from_json(const nlohmann::json &j, const std::string &where) {
  Traffic t;
  t.calls = number_in(j, "calls", 0, kMaxNumber, where);
  auto rows = util::json_field<nlohmann::json>(j, "classes", where);
  if (!rows.is_array()) {
    throw Error(where + ": field 'classes' has the wrong type");
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string at = where + ": classes[" + std::to_string(i) + "]";
    t.classes.push_back(row_from_json(rows[i], at));
    t.classes.back().share = number_in(rows[i], "share", 0, 1, at);
  }
  t.overall =
      row_from_json(util::json_field<nlohmann::json>(j, "overall", where), where + ": overall");
  return t;
}

} // namespace

Decision decision_from_json(const nlohmann::json &j, const std::string &source) {
  Decision d;
  d.family = util::json_field<std::string>(j, "family", source);
  d.candidate = util::json_field<std::string>(j, "candidate", source);
  d.hash = util::json_field<std::string>(j, "hash", source);
  d.best = util::json_field<std::string>(j, "best", source);
  d.best_hash = util::json_field<std::string>(j, "best_hash", source);
  d.target = util::json_field<std::string>(j, "target", source);
  d.date = util::json_field<std::string>(j, "date", source);
  d.measured_by = util::json_field<std::string>(j, "measured_by", source);
  d.options.noise = number_in(j, "noise", 0, 1, source);
  d.options.max_regression = number_in(j, "max_regression", 0, 1, source);
  d.options.confidence = j.contains("confidence") ? number_in(j, "confidence", 0.5, 1, source)
                                                  : spec::defaults::keep_confidence;
  std::string method = util::json_field_or<std::string>(j, "method", "means", source);
  if (method != "paired" && method != "means") {
    throw Error(source + ": method: expected one of paired, means, got '" + method + "'");
  }
  d.method = method == "paired" ? Method::paired : Method::means;
  d.rounds = static_cast<int>(util::json_int_in_or(j, "rounds", 0, INT32_MAX, 0, source));
  d.identical_to = util::json_field_or<std::string>(j, "identical_to", "", source);
  d.notes = util::json_field_or<std::vector<std::string>>(j, "notes", {}, source);
  auto outside = util::json_field_or<nlohmann::json>(j, "outside_kernel_regex",
                                                     nlohmann::json::array(), source);
  if (!outside.is_array()) {
    throw Error(source + ": field 'outside_kernel_regex' has the wrong type");
  }
  for (size_t i = 0; i < outside.size(); ++i) {
    std::string where = source + ": outside_kernel_regex[" + std::to_string(i) + "]";
    d.outside_regex.push_back(
        {util::json_field<std::string>(outside[i], "kernel", where),
         util::json_field<double>(outside[i], "share", where),
         static_cast<int>(util::json_int_in(outside[i], "configs", 0, INT32_MAX, where))});
  }
  d.options.harness_time = util::json_field<bool>(j, "allow_harness_time", source)
                               ? HarnessTime::allow
                               : HarnessTime::refuse;
  // Absent in decisions written before the option existed: they refused mixed timers.
  d.options.mixed_timers =
      j.contains("allow_mixed_timers") && util::json_field<bool>(j, "allow_mixed_timers", source)
          ? MixedTimers::allow
          : MixedTimers::refuse;
  d.options.mixed_builds =
      j.contains("allow_mixed_builds") && util::json_field<bool>(j, "allow_mixed_builds", source)
          ? MixedBuilds::allow
          : MixedBuilds::refuse;
  d.build = util::json_field_or<std::string>(j, "build", "", source);
  d.build_flags = util::json_field_or<std::string>(j, "build_flags", "", source);
  d.configs = static_cast<int>(util::json_int_in_or(j, "configs", 0, INT32_MAX, 0, source));
  d.configs_hash = util::json_field_or<std::string>(j, "configs_hash", "", source);
  d.arrangement = util::json_field_or<std::string>(j, "arrangement", "", source);
  d.verdict =
      parse_verdict(util::json_field<std::string>(j, "verdict", source), source + ": verdict");
  d.reason = util::json_field<std::string>(j, "reason", source);
  auto classes = util::json_field<nlohmann::json>(j, "classes", source);
  if (!classes.is_array()) {
    throw Error(source + ": field 'classes' has the wrong type");
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    d.classes.push_back(row_from_json(classes[i], source + ": classes[" + std::to_string(i) + "]"));
  }
  d.winning = util::json_field<std::vector<std::string>>(j, "winning", source);
  d.split_advice = util::json_field<std::string>(j, "split_advice", source);
  auto incorrect = util::json_field<nlohmann::json>(j, "incorrect", source);
  if (!incorrect.is_array()) {
    throw Error(source + ": field 'incorrect' has the wrong type");
  }
  for (size_t i = 0; i < incorrect.size(); ++i) {
    std::string where = source + ": incorrect[" + std::to_string(i) + "]";
    ConfigError e;
    e.config = util::json_field<std::string>(incorrect[i], "config", where);
    auto err = util::json_field<nlohmann::json>(incorrect[i], "err", where);
    e.err_known = !err.is_null();
    e.err = e.err_known ? util::json_field<double>(incorrect[i], "err", where) : 0;
    d.incorrect.push_back(e);
  }
  auto overall = util::json_field<nlohmann::json>(j, "overall", source);
  if (!overall.is_null()) {
    d.overall = row_from_json(overall, source + ": overall");
  }
  d.options.weighting = weighting_from_json(j, source);
  // Absent in decisions written before traffic rows existed, null without a count column.
  auto traffic = util::json_field_or<nlohmann::json>(j, "traffic", nullptr, source);
  if (!traffic.is_null()) {
    d.traffic = traffic_from_json(traffic, source + ": traffic");
  }
  auto light = util::json_field_or<nlohmann::json>(j, "speed_of_light", nullptr, source);
  if (!light.is_null()) {
    d.speed_of_light = speed_of_light_from_json(light, source + ": speed_of_light");
  }
  return d;
}

Calibration calibration_from(const Decision &aa) {
  if (aa.method != Method::paired) {
    throw Error("calibration of " + aa.best +
                ": the A/A measurement has no side-by-side "
                "samples (" +
                aa.reason + ")");
  }
  Calibration c;
  c.family = aa.family;
  c.best = aa.best;
  c.date = aa.date;
  c.rounds = aa.rounds;
  c.confidence = aa.options.confidence;
  for (const ClassRow &row : aa.classes) {
    c.classes.push_back({row.config_class, std::max(row.high - row.change, row.change - row.low)});
  }
  return c;
}

nlohmann::json to_json(const Calibration &c) {
  nlohmann::json classes = nlohmann::json::array();
  for (const Resolution &r : c.classes) {
    classes.push_back({{"class", r.config_class}, {"half_width", r.half_width}});
  }
  return {{"family", c.family}, {"best", c.best},     {"device", c.device},
          {"date", c.date},     {"rounds", c.rounds}, {"confidence", c.confidence},
          {"classes", classes}};
}

Calibration read_calibration(const std::filesystem::path &path) {
  std::string source = path.string();
  nlohmann::json j = util::read_json(path);
  Calibration c;
  c.family = util::json_field<std::string>(j, "family", source);
  c.best = util::json_field<std::string>(j, "best", source);
  c.device = util::json_field<std::string>(j, "device", source);
  c.date = util::json_field<std::string>(j, "date", source);
  c.rounds = static_cast<int>(util::json_int_in(j, "rounds", 0, INT32_MAX, source));
  c.confidence = util::json_field<double>(j, "confidence", source);
  auto classes = util::json_field<nlohmann::json>(j, "classes", source);
  if (!classes.is_array()) {
    throw Error(source + ": field 'classes' has the wrong type");
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    std::string where = source + ": classes[" + std::to_string(i) + "]";
    c.classes.push_back({util::json_field<std::string>(classes[i], "class", where),
                         util::json_field<double>(classes[i], "half_width", where)});
  }
  return c;
}

void write_calibration(const std::filesystem::path &path, const Calibration &calibration) {
  util::write_json_atomic(path, to_json(calibration));
}

Decision read_decision(const std::filesystem::path &path) {
  Decision decision = decision_from_json(util::read_json(path), path.string());
  decision.file = path.string();
  return decision;
}

void write_decision(const std::filesystem::path &path, const Decision &decision) {
  util::write_json_atomic(path, to_json(decision));
}

} // namespace kopt::decide
