#pragma once

#include "ledger/ledger.hpp"
#include "spec/layout.hpp"

#include <optional>
#include <string>

namespace kopt::ledger {

/// What `kopt record` did: the baseline's first record when it came first, then the candidate's.
struct RecordRun {
  std::optional<Recorded> baseline; ///< set when the ledger had no state and BEST was the baseline
  Recorded recorded;
};

/// Checks that `decision` (read from decision.json) is of candidate `id` and bound to `hash`, its
/// content hash now; throws kopt::Error "<file>: <field>: expected <x>, got <y>: <why>; run kopt
/// decide --candidate <id> again" otherwise.
void check_decided(const decide::Decision &decision, const std::string &id,
                   const std::string &hash);

/// Records candidate `id`'s decision (results/<id>/decision.json; a missing one throws naming the
/// file and the `kopt decide` to run) with its measurement (a missing one is a failed attempt).
/// A decision or measurement that is not of the candidate's content now is refused
/// (check_decided, decide::check_measured) before anything is written.
/// With no state yet and a decision made against the baseline, the baseline is recorded first,
/// from the samples measured beside the candidate when it has no measurement of its own.
RecordRun record_candidate(const spec::Layout &layout, const spec::Family &family,
                           const candidate::CandidateSet &candidates, const std::string &id,
                           const Options &options = {});

} // namespace kopt::ledger
