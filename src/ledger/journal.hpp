#pragma once

#include "ledger/ledger.hpp"

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// How a change of the ledger reaches its three files so that a kill or a failed write at any
// step leaves the old ledger, the new one, or one the next command completes (docs/FORMATS.md,
// "The ledger's write order"):
//
//   1. ledger.journal  (atomic: the new state and the attempts line)  <- the commit point
//   2. attempts.jsonl  (the line appended)
//   3. state.json      (atomic)
//   4. performance.md  (atomic, as the ledger rendered it from the state and attempts.jsonl)
//   5. ledger.journal removed
//
// Before step 1 ends nothing changed (a temp file at most). From then on the journal holds all
// the next command needs to finish steps 2-5: it appends the line unless attempts.jsonl already
// ends with it (a half-written line is cut back first), then rewrites state.json and
// performance.md and removes the journal, as SQLite's journal does for its database.

namespace kopt::ledger {

/// One change of the ledger as the ledger rendered it: the attempts.jsonl line, the new
/// state.json and performance.md's text (the state beside attempts.jsonl with the line).
struct Change {
  nlohmann::json line;
  nlohmann::json state;
  std::string performance;
};

/// Appends `change.line` to attempts.jsonl and writes the state and performance.md in the order
/// above. A failed step throws its error, saying that the journal keeps the change for the next
/// command once the journal is in place.
void commit(const Files &files, const Change &change);

/// Returns performance.md's text for a journal's state once attempts.jsonl holds its line: the
/// ledger renders, the journal writes what it is given.
using RenderPerformance = std::function<std::string(const State &state)>;

/// Finishes what a killed or failed commit left, under the ledger's lock: removes the temp files
/// of the ledger's writes (`state.json.tmp.*` and the like) and completes a journal, with
/// performance.md from `render`. Returns one line per repair for the user (empty when there was
/// nothing to do).
std::vector<std::string> recover(const Files &files, const RenderPerformance &render);

/// Why state.json cannot be opened as a file: "missing", "a dangling link" or "a link loop";
/// "" when it can (whether its content reads is another question).
std::string unreadable_state(const Files &files);

/// Whether recover() has work: a journal or a temp file in the ledger's folder.
bool needs_recovery(const Files &files);

} // namespace kopt::ledger
