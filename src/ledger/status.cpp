#include "ledger/detail.hpp"

#include "util/text.hpp"

#include <algorithm>

namespace kopt::ledger {

using detail::fixed;
using detail::short_hash;

std::string summary_line(const State &s) {
  std::string line = "BEST " + (s.best.empty() ? std::string("none") : s.best) + " (hash " +
                     short_hash(s.best_hash) + "), consecutive regressions " +
                     std::to_string(s.consecutive_regressions) + ", ";
  return line + (s.stopped ? "stopped: " + s.stop_reason : std::string("running"));
}

std::string format_status(const State &s) {
  std::string text = "family: " + s.family + "\n";
  text += "BEST: " + (s.best.empty() ? std::string("none") : s.best) + " (hash " +
          short_hash(s.best_hash) + ")";
  if (!s.kept.empty()) {
    text +=
        ", geomean " + fixed(s.kept.back().geomean_us) + " us (" + s.kept.back().measured_by + ")";
  }
  text += "\nconsecutive regressions: " + std::to_string(s.consecutive_regressions) + "\n";
  std::vector<std::string> repairs;
  for (const auto &[proposal, n] : s.repair_attempts) {
    bool abandoned =
        std::find(s.abandoned.begin(), s.abandoned.end(), proposal) != s.abandoned.end();
    repairs.push_back(proposal + " " + std::to_string(n) + (abandoned ? " (abandoned)" : ""));
  }
  text +=
      "repair attempts: " + (repairs.empty() ? std::string("none") : util::join(repairs, ", ")) +
      "\n";
  text +=
      "stopped: " + (s.stopped ? "yes, " + s.stop_date + ": " + s.stop_reason : std::string("no")) +
      "\n";
  text += "recent regressions:";
  if (s.recent_regressions.empty()) {
    return text + " none\n";
  }
  text += "\n";
  for (const RegressionSummary &r : s.recent_regressions) {
    std::vector<std::string> classes;
    for (const ClassChange &c : r.classes) {
      classes.push_back(c.config_class + " " + decide::format_change(c.change));
    }
    text += "  " + r.date + " " + r.candidate + " vs " + r.best + " (target " + r.target +
            "): overall " + decide::format_change(r.overall.change) + "; " +
            util::join(classes, ", ") + "\n";
  }
  return text;
}

} // namespace kopt::ledger
