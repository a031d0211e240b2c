#pragma once

#include "candidate/candidate.hpp"
#include "ledger/attempt.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kopt::report {

/// One candidate as `kopt ls` shows it: where it stands in the loop.
struct CandidateRow {
  std::string id;
  std::string base; ///< "" for the baseline
  std::string hash; ///< its content hash now ("" when its sources cannot be read)
  std::string hypothesis;
  bool built = false;   ///< its harness binary exists
  std::string measured; ///< "ok", "failed", "stale", "unreadable" or "" (never measured)
  /// Why the measurement is stale (other sources, or configs, golden, harness or build changed
  /// since it was taken), "" when it is current; its verdict is then stale too.
  std::string stale;
  std::string verdict;  ///< its decision.json's verdict, "" when not decided
  std::string recorded; ///< "BEST", "kept", "baseline", an attempt's verdict, or ""
  bool changed = false; ///< BEST or kept, and its content hash is not the one it was kept with
  std::string problem;  ///< why the hash could not be computed, else ""
};

/// The candidates of a family in id order, with what the state folder and ledger say of each.
std::vector<CandidateRow> list_candidates(const spec::Family &family,
                                          const candidate::CandidateSet &candidates,
                                          const spec::Layout &layout);

/// One class's change as the report shows it (a decided row, an attempt's, an application A/B).
struct ClassChange {
  std::string config_class;
  double change = 0;                                 ///< candidate / BEST - 1
  std::optional<std::pair<double, double>> interval; ///< the change's interval (paired)
  std::string state;                                 ///< better, worse, tie, pending
};

/// An attempt line's class row as the report shows it (state "" when the line has none).
ClassChange change_of(const ledger::AttemptClass &row);

/// A decided row as the report shows it: its change, interval and state.
inline ClassChange change_of(const decide::ClassRow &row) {
  return change_of(ledger::attempt_class(row));
}

/// One line of attempts.jsonl (the ledger's record) with what the report adds to an attempt.
struct Attempt : ledger::Attempt {
  /// The application A/B of this content against this BEST (results/<id>/app.json), when run.
  std::optional<ClassChange> application;
  std::optional<double> predicted; ///< the application's change the traffic rows predicted
};

/// What a line says happened: "baseline" for the baseline, an attempt's verdict, an event's one
/// line ("rebased BEST 03 (hash ... -> ...): why", "landed 03: ...", a stop's reason).
std::string verdict_of(const ledger::Attempt &a);

/// Reads attempts.jsonl in file order through ledger::read_attempt_records, which checks every
/// line's kind and fields (docs/FORMATS.md) and names `file:line` and the field of a bad one; no
/// file is an empty history.
std::vector<Attempt> read_attempts(const std::filesystem::path &file);

/// The candidates as JSON (`kopt ls --json`).
nlohmann::json to_json(const std::vector<CandidateRow> &rows);

/// The candidates as an aligned text table.
std::string format_candidates(const std::vector<CandidateRow> &rows);

/// The history as JSON (`kopt log --json`).
nlohmann::json to_json(const std::vector<Attempt> &attempts);

/// The history as text: one line per attempt (date, candidate, verdict, overall change and
/// interval, hypothesis), each class's change indented under it.
std::string format_attempts(const std::vector<Attempt> &attempts);

} // namespace kopt::report
