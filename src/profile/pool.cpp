// Re-measurement pools: a new side-by-side measurement of the same code beside the same BEST
// continues the previous one's evidence instead of replacing it (docs/KEEP.md, "Each decision
// stands alone; measuring again adds rounds").
#include "profile/bench.hpp"

#include "util/stats.hpp"

#include <algorithm>

namespace kopt::profile {

namespace {

// Why `before` and `now` (one side, two measurements) are not measurements of the same thing
// under the same conditions, or "".
std::string differs(const Measurement &before, const Measurement &now) {
  if (!before.ok() || !now.ok()) {
    return "a measurement failed";
  }
  if (before.hash != now.hash) {
    return "candidate " + now.candidate + "'s code changed";
  }
  if (before.device != now.device || before.driver != now.driver ||
      before.measured_by != now.measured_by || before.build != now.build ||
      before.warmup != now.warmup || before.repeat != now.repeat) {
    return "measured on another device, driver, timer, build or run count";
  }
  if (before.configs_hash != now.configs_hash || before.golden != now.golden ||
      before.harness_source != now.harness_source || before.configs.size() != now.configs.size()) {
    return "other configs, golden or harness";
  }
  for (size_t i = 0; i < now.configs.size(); ++i) {
    if (before.configs[i].values != now.configs[i].values) {
      return "other configs";
    }
  }
  return "";
}

void add_rounds(const Measurement &before, Measurement &now, int looks) {
  for (size_t i = 0; i < now.configs.size(); ++i) {
    ConfigResult &c = now.configs[i];
    const ConfigResult &b = before.configs[i];
    c.rounds.insert(c.rounds.begin(), b.rounds.begin(), b.rounds.end());
    std::vector<double> medians;
    for (const std::vector<double> &round : c.rounds) {
      medians.push_back(util::median(round));
    }
    c.us = util::median(medians);
    c.checked = c.checked < 0 || b.checked < 0 ? -1 : c.checked + b.checked;
    if (b.err_known) {
      c.err = c.err_known ? std::max(c.err, b.err) : b.err;
      c.err_known = true;
    }
  }
  now.looks = looks;
  now.others_cpu = std::max(now.others_cpu, before.others_cpu); // busy in either: busy
}

} // namespace

std::string pool_rounds(const Measurement &best_before, const Measurement &before,
                        Measurement &best, Measurement &candidate) {
  if (before.paired_best != candidate.paired_best ||
      before.paired_best_hash != candidate.paired_best_hash || best_before.hash != best.hash) {
    return "the previous measurement was beside another BEST";
  }
  const size_t rounds = before.sampled_rounds();
  if (rounds < 2 || best_before.sampled_rounds() != rounds || candidate.sampled_rounds() < 2 ||
      best.sampled_rounds() != candidate.sampled_rounds()) {
    return "the previous measurement has no side-by-side samples";
  }
  for (const auto &[was, now] : {std::pair{&before, &candidate}, std::pair{&best_before, &best}}) {
    if (std::string why = differs(*was, *now); !why.empty()) {
      return why;
    }
  }
  const int looks = std::max(before.looks, 1) + 1;
  add_rounds(before, candidate, looks);
  add_rounds(best_before, best, looks);
  return "";
}

} // namespace kopt::profile
