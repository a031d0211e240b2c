// decide(): who is compared with whom, the refusals and comparison it runs (admit.cpp,
// compare.cpp), and the verdict's rules over the compared class rows.
#include "decide/decide.hpp"

#include "decide/detail.hpp"
#include "decide/format.hpp"
#include "decide/stats.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace kopt::decide {

namespace {

using namespace detail;
using profile::ConfigResult;
using profile::Measurement;

std::string changes(const std::vector<const ClassRow *> &rows) {
  std::vector<std::string> parts;
  for (const ClassRow *row : rows) {
    parts.push_back(row->config_class + " " + format_change(row->change));
  }
  return util::join(parts, ", ");
}

// The judged rows by how they moved: what the verdict's rules look at.
struct Moves {
  std::vector<const ClassRow *> better;
  std::vector<const ClassRow *> worse;
  // Worse (its interval beyond the threshold) and by more than max_regression: a class whose
  // interval reaches zero is no regression however far its point estimate lies.
  std::vector<const ClassRow *> beyond;
  const ClassRow *target = nullptr;
};

Moves moves_of(const Decision &d) {
  Moves m;
  for (const ClassRow &row : d.judged_classes()) {
    if (row.config_class == d.target) {
      m.target = &row;
    }
    if (row.state == State::better) {
      m.better.push_back(&row);
    } else if (row.state == State::worse) {
      m.worse.push_back(&row);
    }
    if (row.state == State::worse && row.change > d.options.max_regression) {
      m.beyond.push_back(&row);
    }
  }
  return m;
}

// "dispatch <winning classes> to candidate 07's kernel (<its kernels there>) and keep the other
// classes on BEST 03's".
std::string split_advice(const Decision &d, const Measurement &candidate) {
  std::set<std::string> kernels;
  std::set<std::string> winning(d.winning.begin(), d.winning.end());
  for (const ConfigResult &c : candidate.configs) {
    if (winning.count(c.config_class) && !c.kernel.empty()) {
      kernels.insert(c.kernel);
    }
  }
  return "dispatch " + util::join(d.winning, ", ") + " to candidate " + d.candidate + "'s kernel" +
         (kernels.empty() ? std::string()
                          : " (" + util::join({kernels.begin(), kernels.end()}, ", ") + ")") +
         " and keep the other classes on BEST " + d.best + "'s";
}

// Why nothing decided the candidate either way.
std::string tie_reason(const Decision &d, const Moves &m, const ClassRow &overall) {
  bool global = d.target == "global";
  if (global && !m.better.empty()) {
    std::vector<const ClassRow *> rest;
    for (const ClassRow &row : d.judged_classes()) {
      if (row.state != State::better) {
        rest.push_back(&row);
      }
    }
    return "target global needs every class to improve; improved: " + changes(m.better) +
           "; not: " + changes(rest);
  }
  if (global) {
    return "no class changed beyond noise (overall " + format_change(overall.change) + ")";
  }
  std::string reason =
      "target " + d.target + " within noise (" + format_change(m.target->change) + ")";
  if (!m.better.empty()) {
    reason += "; improved elsewhere: " + changes(m.better);
  }
  return reason;
}

void judge(Decision &d, const Measurement &candidate) {
  const ClassRow &overall =
      d.options.weighting == Weighting::traffic ? d.traffic->overall : *d.overall;
  Moves m = moves_of(d);
  const ClassRow *target = m.target;
  bool global = d.target == "global";
  std::string limit = format_percent(d.options.max_regression, 4);

  if (global && m.better.size() == d.judged_classes().size()) {
    d.verdict = Verdict::keep;
    d.reason = "every class improved beyond noise (overall " + format_change(overall.change) + ")";
    return;
  }
  if (!global && target->state == State::better && m.beyond.empty()) {
    d.verdict = Verdict::keep;
    d.reason = "target " + d.target + " improved " + format_change(target->change) +
               ", no other class regressed more than " + limit;
    return;
  }
  if (!m.better.empty() && !m.beyond.empty()) {
    d.verdict = Verdict::split;
    for (const ClassRow *row : m.better) {
      d.winning.push_back(row->config_class);
    }
    d.reason = util::join(d.winning, ", ") + " improved beyond noise while " + changes(m.beyond) +
               " regressed more than " + limit;
    d.split_advice = split_advice(d, candidate);
    return;
  }
  if (!global && target->state == State::worse) {
    d.verdict = Verdict::regression;
    d.reason = "target " + d.target + " regressed " + format_change(target->change);
    return;
  }
  if (m.better.empty() && !m.worse.empty()) {
    d.verdict = Verdict::regression;
    d.reason = "no class improved beyond noise; worse: " + changes(m.worse);
    return;
  }
  d.verdict = Verdict::tie;
  d.reason = tie_reason(d, m, overall);
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

// A threshold below what this machine resolves (kopt calibrate) on the measured device.
void add_resolution_notes(Decision &d, const Request &request, const Classes &classes,
                          const std::string &device) {
  if (!request.calibration || request.calibration->device != device) {
    return;
  }
  for (const Resolution &r : request.calibration->classes) {
    if (r.half_width > d.options.threshold && classes.pairs.count(r.config_class)) {
      d.notes.push_back("the threshold " + format_change(d.options.threshold).substr(1) +
                        " is below this machine's resolution for " + r.config_class + " (" +
                        format_change(r.half_width).substr(1) + ", kopt calibrate on " +
                        request.calibration->date + "): only changes beyond it can show there");
    }
  }
}

// How much BEST's own times moved over the side-by-side rounds: the largest over the smallest
// round of the geomean over its configs of each round's median, minus 1 (0 without rounds).
double own_spread(const Measurement &best, size_t rounds) {
  if (rounds < 2 || best.configs.empty()) {
    return 0;
  }
  std::vector<double> per_round(rounds, 0);
  for (const profile::ConfigResult &c : best.configs) {
    for (size_t k = 0; k < rounds; ++k) {
      per_round[k] +=
          std::log(util::median(c.rounds[k])) / static_cast<double>(best.configs.size());
    }
  }
  auto [low, high] = std::minmax_element(per_round.begin(), per_round.end());
  return std::exp(*high - *low) - 1;
}

// A host machine that could not measure steadily: other processes took a large share of its
// CPU time (profile::Measurement::others_cpu; A/As beside such load gave classes 11-12%
// "better"), or BEST's own times moved by kUnsteadyHost or more over the rounds (load from
// outside the machine, which others_cpu cannot see: identical runs 1.25-1.93 s apart on a 2-core
// virtual machine gave an A/A class "worse" by +24% [+2.6%, +50.8%]). A class is then judged
// better or worse only where its whole interval lies beyond the margin: kBusyMargin, or BEST's
// own movement where that is larger; the rest are ties.
struct Unsteady {
  int ties = 0;      ///< rows made ties by the margin
  double margin = 0; ///< 0: a steady machine (or not a host measurement)
};
Unsteady judge_unsteady_host(Decision &d, const Measurement &best, const Measurement &candidate) {
  if (candidate.others_cpu < 0) {
    return {}; // not a host measurement side by side
  }
  const bool busy = candidate.others_cpu >= kBusyMachine;
  const double spread = own_spread(best, static_cast<size_t>(d.rounds));
  if (!busy && spread < kUnsteadyHost) {
    return {};
  }
  const double margin = std::max(kBusyMargin, spread);
  int within = 0;
  auto judge = [&within, margin](ClassRow &row) {
    row.pending = false;
    bool beyond =
        row.has_interval ? row.high < -margin || row.low > margin : std::abs(row.change) >= margin;
    if (row.state != State::tie && !beyond) {
      row.state = State::tie;
      ++within;
    }
  };
  std::for_each(d.classes.begin(), d.classes.end(), judge);
  if (d.overall) {
    judge(*d.overall);
  }
  if (d.traffic) {
    std::for_each(d.traffic->classes.begin(), d.traffic->classes.end(), judge);
    judge(d.traffic->overall);
  }
  const std::string beyond = "so a class counts only where its whole interval lies beyond " +
                             format_change(margin).substr(1) + "; measure again on ";
  if (busy) {
    d.notes.push_back("other processes used " +
                      util::format_number(std::round(candidate.others_cpu * 100)) +
                      "% of this machine's CPU time while the rounds ran (" +
                      util::format_number(std::round(kBusyMachine * 100)) +
                      "% or more is a busy machine): a host kernel's times under such load move "
                      "beyond the threshold either way, " +
                      beyond + "an idle machine");
  } else {
    d.notes.push_back("BEST's own times moved by " + format_change(spread).substr(1) +
                      " over the rounds (" + format_change(kUnsteadyHost).substr(1) +
                      " or more is an unsteady machine, loaded from outside): " + beyond +
                      "a steady machine");
  }
  return {within, margin};
}

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

// The verdict on the compared rows, and what was compared only because it was asked.
Decision conclude(Decision d, const Measurement &best, const Measurement &candidate) {
  const Options &options = d.options;
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

// Groups the paired configs by class and compares each class, then concludes.
Decision compare_and_conclude(Decision d, const Pairing &pairing, const Measurement &best,
                              const Measurement &candidate, const Request &request) {
  const Options &options = d.options;
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
  if (rounds && candidate.looks > 1) {
    // Measured again: its rounds pool the earlier measurements', each look spending less of the
    // error rate, so re-measuring adds evidence and never a new draw at a keep.
    d.options.confidence = pooled_confidence(d.options.confidence, candidate.looks);
    d.notes.push_back(std::to_string(candidate.looks) + " measurements of this code beside BEST " +
                      d.best + " pooled (" + std::to_string(rounds) + " rounds): intervals at " +
                      util::format_number(d.options.confidence * 100, 4) +
                      "%, so measuring again adds evidence, not a new chance at a verdict");
  }
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
  compare_classes(d, classes, pairing.pairs, rounds);
  add_resolution_notes(d, request, classes, best.device);
  const Unsteady unsteady = judge_unsteady_host(d, best, candidate);
  d = conclude(std::move(d), best, candidate);
  if (unsteady.ties > 0 && d.verdict == Verdict::tie) {
    d.reason += "; not judged within " + format_change(unsteady.margin).substr(1) +
                ": the machine was busy or unsteady (measure again on an idle machine)";
  }
  return d;
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
  return compare_and_conclude(std::move(d), pairing, best, candidate, request);
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

} // namespace kopt::decide
