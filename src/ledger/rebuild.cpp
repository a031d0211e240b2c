#include "ledger/detail.hpp"
#include "ledger/journal.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"

#include <algorithm>

namespace kopt::ledger {

namespace {

using detail::interval_of;
using detail::number_or_none;
using detail::strings_of;
using detail::text_or;
using nlohmann::json;

void apply_baseline(State &s, const json &line) {
  State fresh;
  fresh.family = s.family;
  fresh.best = text_or(line, "candidate");
  fresh.best_hash = text_or(line, "hash");
  fresh.kept.push_back({text_or(line, "date"), fresh.best, fresh.best_hash, "baseline",
                        text_or(line, "target", "global"), strings_of(line, "kernels"),
                        text_or(line, "measured_by"),
                        number_or_none(line, "geomean_us").value_or(0), std::nullopt, std::nullopt,
                        text_or(line, "hypothesis", "baseline")});
  set_measured(fresh.kept.back(), line);
  s = std::move(fresh);
}

void apply_keep(State &s, const json &line) {
  std::optional<double> change = number_or_none(line, "overall_change");
  // Lines written before 2026-12 lack the kept geomean: the change from the row above gives it.
  double previous = s.kept.empty() ? 0 : s.kept.back().geomean_us;
  double geomean = number_or_none(line, "geomean_us").value_or(previous * (1 + change.value_or(0)));
  s.kept.push_back({text_or(line, "date"), text_or(line, "candidate"), text_or(line, "hash"),
                    "keep", text_or(line, "target"), strings_of(line, "kernels"),
                    text_or(line, "measured_by"), geomean, change,
                    interval_of(line, "overall_interval"), text_or(line, "hypothesis")});
  set_measured(s.kept.back(), line);
  s.best = text_or(line, "candidate");
  s.best_hash = text_or(line, "hash");
  s.consecutive_regressions = 0;
  s.recent_regressions.clear();
  s.recorded.clear();
}

RegressionSummary summary_of(const json &line) {
  RegressionSummary r{text_or(line, "date"),
                      text_or(line, "best"),
                      text_or(line, "candidate"),
                      text_or(line, "hash"),
                      text_or(line, "hypothesis"),
                      text_or(line, "target"),
                      {},
                      {}};
  auto classes = line.find("classes");
  if (classes != line.end() && classes->is_array()) {
    for (const json &c : *classes) {
      if (c.is_object()) {
        r.classes.push_back({text_or(c, "class"), number_or_none(c, "best_us").value_or(0),
                             number_or_none(c, "candidate_us").value_or(0),
                             number_or_none(c, "change").value_or(0)});
      }
    }
  }
  r.overall = {"overall", number_or_none(line, "best_us").value_or(0),
               number_or_none(line, "geomean_us").value_or(0),
               number_or_none(line, "overall_change").value_or(0)};
  return r;
}

// An attempt other than a keep: the counters as record() left them, which the line carries.
void apply_other(State &s, const json &line) {
  std::string verdict = text_or(line, "verdict");
  std::string event = text_or(line, "event");
  int count = line.value("consecutive_regressions", 0);
  if (verdict == "regression" && count > s.consecutive_regressions) {
    s.recent_regressions.push_back(summary_of(line));
    if (s.recent_regressions.size() > 5) {
      s.recent_regressions.erase(s.recent_regressions.begin());
    }
  }
  if (verdict == "incorrect") {
    std::string proposal = text_or(line, "proposal", text_or(line, "candidate"));
    s.repair_attempts[proposal] += 1;
    if (event == "abandoned" &&
        std::find(s.abandoned.begin(), s.abandoned.end(), proposal) == s.abandoned.end()) {
      s.abandoned.push_back(proposal);
    }
  }
  s.consecutive_regressions = count;
  if (count == 0) {
    s.recent_regressions.clear();
  }
  if (event == "stopped" && !s.stopped) {
    s.stopped = true;
    s.stop_reason = std::to_string(count) + " consecutive measured regressions";
    s.stop_date = text_or(line, "date");
  }
  s.recorded.push_back({text_or(line, "candidate"), text_or(line, "hash"), verdict});
}

} // namespace

State rebuild_state(const std::vector<json> &attempts, const std::string &family) {
  State s;
  s.family = family;
  for (const json &line : attempts) {
    std::string kind = text_or(line, "kind");
    if (kind == "baseline") {
      apply_baseline(s, line);
    } else if (kind == "rebase") {
      s.best_hash = text_or(line, "hash");
      s.recorded.clear();
    } else if (kind == "land") {
      // The family's files became BEST's: BEST, its hash and the counters stay.
    } else if (kind == "stop") {
      if (!s.stopped) {
        s.stopped = true;
        s.stop_reason = text_or(line, "reason");
        s.stop_date = text_or(line, "date");
      }
    } else if (text_or(line, "verdict") == "keep") {
      apply_keep(s, line);
    } else {
      apply_other(s, line);
    }
  }
  return s;
}

Recorded rebuild(const Files &files, const std::string &family) {
  util::FileLock lock(files.lock());
  util::InterruptShield shield;
  detail::repair(files); // the history must be whole before it is replayed
  std::vector<json> attempts = read_attempts(files.attempts());
  if (attempts.empty()) {
    throw Error(files.attempts().string() +
                ": no history to rebuild state.json from (missing or empty)");
  }
  std::string what = unreadable_state(files);
  if (what.empty()) {
    try {
      state_from_json(util::read_json(files.state()), files.state().string());
    } catch (const Error &) {
      what = "unreadable";
    }
  }
  if (what.empty()) {
    throw Error(files.state().string() +
                ": readable, so it is not rebuilt; move it away first to rebuild it from " +
                files.attempts().string());
  }
  std::string kept_aside;
  if (what == "unreadable") {
    // The damaged file may still be worth reading: it is kept, never overwritten.
    std::filesystem::path aside = files.state();
    aside += ".unreadable";
    std::filesystem::rename(files.state(), aside);
    kept_aside = " (the unreadable one is now " + aside.string() + ")";
  }
  State s = rebuild_state(attempts, family);
  util::write_json_atomic(files.state(), to_json(s));
  util::write_file_atomic(files.performance(), render_performance(s, attempts));
  return {Outcome::recorded,
          "rebuilt " + files.state().string() + " from the " + std::to_string(attempts.size()) +
              " lines of " + files.attempts().string() + kept_aside + "; performance.md rewritten",
          s};
}

} // namespace kopt::ledger
