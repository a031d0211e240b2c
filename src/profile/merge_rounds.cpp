#include "profile/bench.hpp"

#include "util/error.hpp"
#include "util/stats.hpp"

#include <algorithm>
#include <cmath>

namespace kopt::profile {

namespace {

// Config `i`'s kernels outside kernel_regex over all runs: each one's mean share of the time
// (0 in a run where it did not run), in first-seen order.
std::vector<OutsideKernel> merged_outside_regex(const std::vector<Measurement> &runs, size_t i) {
  std::vector<OutsideKernel> merged;
  for (const Measurement &run : runs) {
    for (const OutsideKernel &k : run.configs[i].outside_regex) {
      auto it = std::find_if(merged.begin(), merged.end(),
                             [&](const OutsideKernel &o) { return o.kernel == k.kernel; });
      if (it == merged.end()) {
        it = merged.insert(merged.end(), {k.kernel, 0});
      }
      it->share += k.share / static_cast<double>(runs.size());
    }
  }
  return merged;
}

} // namespace

Measurement merge_rounds(const std::vector<Measurement> &runs, size_t planned) {
  if (runs.empty()) {
    throw Error("merge_rounds: no runs");
  }
  Measurement m = runs.front();
  bool noted = false; // the first round whose profiler failed names the measurement's reason
  for (size_t k = 0; k < runs.size(); ++k) {
    const Measurement &run = runs[k];
    std::string round =
        "round " + std::to_string(k + 1) + " of " + std::to_string(std::max(planned, runs.size()));
    if (!run.ok()) {
      m.status = "failed";
      m.reason = round + ": " + run.reason;
      m.configs.clear();
      return m;
    }
    if (run.hash != m.hash || run.configs.size() != m.configs.size()) {
      m.status = "failed";
      m.reason = round + ": the harness printed hash " + run.hash + " after " + m.hash +
                 " (the binary changed during the measurement)";
      m.configs.clear();
      return m;
    }
    if (!noted && (!run.profiled || run.measured_by != m.measured_by)) {
      noted = true;
      m.measured_by = run.measured_by;
      m.profiled = run.profiled;
      m.reason = round + ": " + run.reason;
    }
  }
  for (size_t i = 0; i < m.configs.size(); ++i) {
    ConfigResult &c = m.configs[i];
    c.rounds.clear();
    c.err_known = false;
    c.err = 0;
    c.checked = 0;
    c.check.clear();
    std::vector<double> medians;
    std::vector<double> harness;
    for (size_t k = 0; k < runs.size(); ++k) {
      const ConfigResult &r = runs[k].configs[i];
      // Unrecorded in any round leaves the whole unrecorded; a failed check names its round.
      c.checked = c.checked < 0 || r.checked < 0 ? -1 : c.checked + r.checked;
      if (c.check.empty() && !r.check.empty()) {
        c.check = "round " + std::to_string(k + 1) + ": " + r.check;
      }
      c.rounds.push_back(r.rounds.empty() ? std::vector<double>{r.us} : r.rounds.front());
      medians.push_back(util::median(c.rounds.back()));
      harness.push_back(r.harness_us);
      if (r.err_known) {
        c.err = c.err_known ? std::max(c.err, r.err) : r.err;
        c.err_known = true;
      }
    }
    c.us = util::median(medians);
    c.harness_us = util::median(harness);
    c.outside_regex = merged_outside_regex(runs, i);
  }
  return m;
}

std::map<std::string, std::pair<int, double>> class_geomeans(const Measurement &m) {
  std::map<std::string, std::pair<int, double>> sums;
  size_t rounds = m.sampled_rounds();
  for (const auto &c : m.configs) {
    auto &[n, log_sum] = sums[c.config_class];
    ++n;
    log_sum += std::log(std::max(config_time_us(c, rounds), 1e-9));
  }
  for (auto &[name, entry] : sums) {
    entry.second = std::exp(entry.second / entry.first);
  }
  return sums;
}

} // namespace kopt::profile
