// Admission: which measurements decide() may compare, and the refusals that end it early
// (failed inputs, a foreign hash, missing or wrong results, unchecked runs, incomparable times).
#include "decide/detail.hpp"

#include "buildinfo/build_flags.hpp"
#include "util/text.hpp"

#include <kopt/harness/config.hpp>

#include <algorithm>
#include <cmath>

namespace kopt::decide::detail {

using harness::config_label;
using profile::ConfigResult;
using profile::Measurement;
std::string list_some(const std::vector<std::string> &items, size_t limit) {
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

} // namespace kopt::decide::detail
