#pragma once

#include "candidate/candidate.hpp"
#include "ledger/ledger.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <string>

namespace kopt::round {

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

} // namespace kopt::round
