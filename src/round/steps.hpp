#pragma once

#include "decide/decide.hpp"
#include "ledger/ledger.hpp"
#include "round/loaded_family.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kopt::round {

/// The keep test's thresholds from family.json (`keep`: threshold, confidence, max_regression).
decide::Options keep_options(const spec::Family &family);

/// The keep test of candidate `id` against `best` from the measurement files in results/<id>/
/// (a missing one is a failed attempt): writes results/<id>/decision.json and returns it. The
/// caller holds the candidate's results lock.
decide::Decision decide_candidate(const LoadedFamily &loaded, const std::string &id,
                                  const ledger::Best &best, const decide::Options &options);

/// What recording a decision did: the baseline's first record when the ledger had no state, and
/// the candidate's.
struct RecordOutcome {
  std::optional<ledger::Recorded> baseline;
  ledger::Recorded recorded;
};

/// Records candidate `id`'s decision.json in the ledger (ledger::record); with no state yet the
/// baseline is recorded first from its measurement (or the one measured beside `id`).
RecordOutcome record_candidate(const LoadedFamily &loaded, const std::string &id,
                               const ledger::Options &limits);

/// Proves from ninja's recorded dependencies in `build_dir` that candidate `id`'s objects were
/// compiled from its own generated sources (a worktree build can silently pick up the baseline's
/// files); returns the problems, empty when it holds.
std::vector<std::string> identity_problems(const LoadedFamily &loaded, const std::string &id,
                                           const std::string &build_dir, const std::string &prefix);

} // namespace kopt::round
