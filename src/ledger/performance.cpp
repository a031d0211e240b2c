#include "ledger/detail.hpp"

#include "buildinfo/build_flags.hpp"
#include "decide/format.hpp"
#include "gen/text_template.hpp"
#include "util/text.hpp"

namespace kopt::ledger {

namespace {

using detail::fixed;
using detail::interval_of;
using detail::number_or_none;
using detail::short_hash;
using detail::text_or;

// A table cell: pipes and line breaks would end the cell or the row.
std::string cell(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

// One line of attempts.jsonl as a row of performance.md's Attempts table. read_attempts checked
// the fields of its kind; classes and overall_interval, added later, show where well formed.
std::string attempt_row(const nlohmann::json &line) {
  std::string kind = text_or(line, "kind");
  std::string verdict =
      kind == "attempt" ? text_or(line, "verdict")
      : kind == "stop"  ? "stopped: " + text_or(line, "reason")
      : kind == "rebase"
          ? "rebase from " + short_hash(text_or(line, "from_hash")) + ": " + text_or(line, "reason")
      : kind == "land" ? "landed: " + text_or(line, "reason")
                       : kind;
  if (std::string event = text_or(line, "event"); !event.empty()) {
    verdict += " (" + event + ")";
  }
  if (!text_or(line, "other_build").empty()) {
    // Recorded with --allow-other-build: the row names the build its times are of.
    buildinfo::BuildFlags build{text_or(line, "build_flags"), text_or(line, "build")};
    verdict += " (build " + build.hash + " (" + build.optimisation() + "), not BEST's)";
  }
  std::vector<std::string> classes;
  auto listed = line.find("classes");
  if (listed != line.end() && listed->is_array()) {
    for (const nlohmann::json &c : *listed) {
      if (std::optional<double> change =
              c.is_object() ? number_or_none(c, "change") : std::nullopt) {
        classes.push_back(text_or(c, "class") + ": " + decide::format_change(*change));
      }
    }
  }
  std::optional<double> overall = number_or_none(line, "overall_change");
  // A baseline's line carries its target and hypothesis for rebuild_state; its row shows
  // neither, as the results table above has them.
  bool baseline = kind == "baseline";
  return "| " + cell(text_or(line, "date")) + " | " + cell(text_or(line, "candidate")) + " | " +
         cell(short_hash(text_or(line, "hash"))) + " | " + cell(verdict) + " | " +
         cell(text_or(line, "best")) + " | " + cell(baseline ? "" : text_or(line, "target")) +
         " | " + cell(util::join(classes, "; ")) + " | " +
         (overall ? decide::format_change(*overall) +
                        decide::interval_after(interval_of(line, "overall_interval"))
                  : "-") +
         " | " + cell(baseline ? "" : text_or(line, "hypothesis")) + " |";
}

} // namespace

std::string render_performance(const State &s, const std::vector<nlohmann::json> &attempts) {
  std::vector<std::string> kept_rows;
  for (const KeptRow &k : s.kept) {
    kept_rows.push_back("| " + cell(k.date) + " | " + cell(k.candidate) + " | " +
                        cell(short_hash(k.hash)) + " | " + k.status + " | " + cell(k.target) +
                        " | " + cell(util::join(k.kernels, ", ")) + " | " + cell(k.measured_by) +
                        " | " + fixed(k.geomean_us) + " | " +
                        (k.change ? decide::format_change(*k.change) : "-") +
                        decide::interval_after(k.interval) + " | " + cell(k.hypothesis) + " |");
  }
  std::vector<std::string> regression_rows;
  for (const RegressionSummary &r : s.recent_regressions) {
    std::vector<std::string> classes;
    for (const ClassChange &c : r.classes) {
      classes.push_back(c.config_class + ": " + fixed(c.best_us) + " -> " + fixed(c.candidate_us) +
                        " (" + decide::format_change(c.change) + ")");
    }
    regression_rows.push_back(
        "| " + cell(r.candidate + " (" + short_hash(r.hash) + ") vs " + r.best) + " | " +
        cell(r.date) + " | " + cell(r.hypothesis) + " | " + cell(r.target) + " | " +
        cell(util::join(classes, "; ")) + " | " + fixed(r.overall.best_us) + " -> " +
        fixed(r.overall.candidate_us) + " | " + decide::format_change(r.overall.change) + " |");
  }
  std::vector<std::string> attempt_rows;
  for (const nlohmann::json &line : attempts) {
    attempt_rows.push_back(attempt_row(line));
  }
  const KeptRow *best = s.kept.empty() ? nullptr : &s.kept.back();
  return gen::expand_builtin(
      "performance.md.in", {{"family", s.family.empty() ? std::string("kopt") : s.family},
                            {"kept_rows", util::join(kept_rows, "\n")},
                            {"attempt_rows", util::join(attempt_rows, "\n")},
                            {"stopped", s.stopped ? "stopped" : ""},
                            {"stop_date", cell(s.stop_date)},
                            {"stop_reason", cell(s.stop_reason)},
                            {"best", cell(s.best)},
                            {"best_hash", cell(short_hash(s.best_hash))},
                            {"best_geomean_us", best ? fixed(best->geomean_us) : ""},
                            {"best_measured_by", best ? cell(best->measured_by) : ""},
                            {"consecutive_regressions", std::to_string(s.consecutive_regressions)},
                            {"regression_rows", util::join(regression_rows, "\n")}});
}

} // namespace kopt::ledger
