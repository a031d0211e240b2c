#pragma once

#include "ledger/ledger.hpp"

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// What the ledger's own files share and nothing outside src/ledger/ calls.
namespace kopt::ledger::detail {

/// Returns a content hash's first 8 characters, as the ledger's texts show it.
std::string short_hash(const std::string &hash);

/// Returns `value` with three decimals ("12.345").
std::string fixed(double value);

// The fields of an attempts.jsonl line (read_attempts' JSON) as rebuild_state and performance.md
// read them: leniently, since lines of older kopts lack fields added later, and a kind lacks
// others. The typed reader (attempt.hpp) is for the views, which refuse a bad value.

/// A string field, or `fallback` where the line has none (a stop has no candidate).
std::string text_or(const nlohmann::json &line, const char *key, const std::string &fallback = "");

/// A number field, or none.
std::optional<double> number_or_none(const nlohmann::json &line, const char *key);

/// An array of strings' strings, or none.
std::vector<std::string> strings_of(const nlohmann::json &line, const char *key);

/// An interval [low, high], or none where it is absent or not well formed.
std::optional<std::pair<double, double>> interval_of(const nlohmann::json &line, const char *key);

/// What a change reads under the lock: state.json (none before the first record) and the checked
/// lines of attempts.jsonl, which performance.md shows beside the state.
struct Contents {
  std::optional<State> state;
  std::vector<nlohmann::json> attempts;
};

/// Commits one change (journal.hpp), rendered here: the new `state` and `line`, appended to
/// attempts.jsonl; `history` is attempts.jsonl as read under the lock, which performance.md
/// shows with the line.
void commit_change(const Files &files, const State &state, std::vector<nlohmann::json> history,
                   const nlohmann::json &line);

/// Completes what a killed or failed record left (journal.hpp's recover, with performance.md
/// rendered from attempts.jsonl), each repair said in a line on stderr; the caller holds the lock.
void repair(const Files &files);

/// Whether read_contents() first completes what a killed or failed record left (journal.hpp).
enum class Recover { yes, no };

/// Reads the ledger; with the lock held and Recover::yes, first completes what a killed or failed
/// record left and says so on stderr. A state.json that is lost or does not read beside a history
/// throws naming both files and the ways out.
Contents read_contents(const Files &files, Recover recovering = Recover::yes);

} // namespace kopt::ledger::detail
