#pragma once

#include "candidate/candidate.hpp"
#include "candidate/land_journal.hpp"
#include "ledger/ledger.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <iosfwd>
#include <string>

namespace kopt::measure {

/// A family loaded for one command: the spec, its candidates and its state layout.
struct LoadedFamily {
  spec::Family family;
  candidate::CandidateSet candidates;
  spec::Layout layout;

  /// The baseline: the candidate without a base (00 by convention); see ledger::baseline.
  std::string baseline() const;

  /// BEST from the ledger, or the baseline before the first record; see ledger::resolve_best.
  ledger::Best best(ledger::ContentCheck check = ledger::ContentCheck::verify) const;
};

/// Loads family.json from `spec`, discovers the candidates and builds the layout of `state_dir`
/// (`ledger` empty: <state_dir>/ledger).
LoadedFamily load(const std::string &spec, const std::string &state_dir,
                  const std::string &ledger = {});

/// Completes or rolls back what a killed or failed `kopt land` left in `family` (a journal in
/// `layout`'s state folder; candidate::complete_land, its ledger line through
/// ledger::record_land), each repair said in one line `kopt: ...` on `err`. Every command that
/// changes or reports the family (status, log, record, round, land) runs it before reading.
void complete_land(const spec::Family &family, const spec::Layout &layout, std::ostream &err,
                   candidate::FamilyLock lock = candidate::FamilyLock::take);

} // namespace kopt::measure
