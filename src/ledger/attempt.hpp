#pragma once
// One line of attempts.jsonl as a typed record (docs/FORMATS.md, "attempts.jsonl"): what every
// reader of the history gets, and what the ledger writes back as the line.

#include "decide/decision.hpp"
#include "profile/measurement.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::ledger {

/// What a line of attempts.jsonl records: a baseline, an attempt, or an event (a rebase, a land,
/// a stop).
enum class Kind { baseline, attempt, rebase, land, stop };

/// Returns "baseline", "attempt", "rebase", "land" or "stop".
const char *to_string(Kind kind);

/// What an attempt did to the loop beyond its verdict.
enum class Event { none, abandoned, stopped };

/// Returns "" (none), "abandoned" or "stopped".
const char *to_string(Event event);

/// A change's interval (low, high), when it has one.
using Interval = std::optional<std::pair<double, double>>;

/// An interval as the ledger's files write it: [low, high], or null without one.
nlohmann::json interval_json(const Interval &interval);

/// One class's row of an attempt line: a `classes` entry, or the `traffic` overall row.
struct AttemptClass {
  std::string config_class;
  std::optional<double> best_us;      ///< absent in lines written before 2026-12
  std::optional<double> candidate_us; ///< absent in lines written before 2026-12
  double change = 0;                  ///< candidate / BEST - 1
  Interval interval;
  std::optional<decide::State> state; ///< absent in lines written before it was kept
};

/// Which of a class row's fields its JSON holds.
enum class RowShape {
  line, ///< attempts.jsonl's {class, best_us, candidate_us, change, interval, state}
  log   ///< `kopt log --json`'s {class, change, interval, state ("" when not recorded)}
};

/// A class row as attempts.jsonl or `kopt log --json` writes it.
nlohmann::json to_json(const AttemptClass &row, RowShape shape = RowShape::line);

/// A decided row's class, times, change, interval and state, as an attempt line keeps them.
AttemptClass attempt_class(const decide::ClassRow &row);

/// One line of attempts.jsonl. Which fields a kind carries is docs/FORMATS.md's list; the others
/// stay empty. Fields written since some date are empty in older lines.
struct Attempt {
  int line = 0; ///< its 1-based line in attempts.jsonl (not part of the line)
  Kind kind = Kind::attempt;
  std::string date;
  std::string candidate; ///< a rebase's and a land's: BEST's id
  std::string hash;
  std::string best;      ///< BEST's id (attempt, rebase, land)
  std::string best_hash; ///< attempt
  std::string from_hash; ///< rebase: BEST's content hash before
  std::string proposal;  ///< attempt
  std::string target;
  std::string hypothesis;
  std::optional<decide::Verdict> verdict; ///< attempt
  std::string reason;
  std::optional<double> overall_change;
  Interval overall_interval;
  std::optional<decide::State> overall_state; ///< as decide concluded it
  std::optional<decide::Method> method;
  std::vector<AttemptClass> classes;
  std::optional<AttemptClass> traffic; ///< decide's traffic overall row
  std::optional<decide::Weighting> weighting;
  int consecutive_regressions = 0;
  Event event = Event::none;
  std::optional<double> geomean_us; ///< the candidate's overall geomean (a baseline's: its own)
  std::optional<double> best_us;    ///< BEST's overall geomean
  std::string measured_by;
  std::vector<std::string> kernels;
  std::string build; ///< the measurement's build, flags, config count and configs file hash
  std::string build_flags;
  int configs = 0;
  std::string configs_hash;
  std::string other_build;          ///< why its build is not BEST's row's (--allow-other-build)
  std::vector<std::string> removed; ///< land: the candidate folders removed
  std::vector<std::string> rebased; ///< land: the candidates rewritten onto the landed files

  /// A rebase, a land or a stop: something that happened to the loop, no comparison of times.
  bool is_event() const { return kind == Kind::rebase || kind == Kind::land || kind == Kind::stop; }

  /// Sets build, build_flags, configs and configs_hash from measurement `m`.
  void set_measured(const profile::Measurement &m);
};

/// Reads one checked line (read_attempts' JSON) into the record; `where` is `<file>:<line>`. A
/// value outside its closed set (a verdict, a state, an event, a weighting, a method) or of the
/// wrong type throws `<file>:<line>: <field>: expected ...`.
Attempt attempt_from_json(const nlohmann::json &j, const std::string &where, int line = 0);

/// The line as the ledger writes it (the fields of its kind; `line` is not written).
nlohmann::json to_json(const Attempt &attempt);

/// Reads attempts.jsonl in file order (read_attempts checks each line's kind and fields first),
/// each line as a typed record; no file is an empty history.
std::vector<Attempt> read_attempt_records(const std::filesystem::path &file);

} // namespace kopt::ledger
