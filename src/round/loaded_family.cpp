#include "round/loaded_family.hpp"

namespace kopt::round {

std::string LoadedFamily::baseline() const { return ledger::baseline(family, candidates); }

ledger::Best LoadedFamily::best(ledger::ContentCheck check) const {
  return ledger::resolve_best(ledger::Files{layout.ledger}, family, candidates, check);
}

LoadedFamily load(const std::string &spec, const std::string &state_dir,
                  const std::string &ledger) {
  spec::Family family = spec::load_family(spec);
  candidate::CandidateSet candidates = candidate::CandidateSet::discover(family);
  spec::Layout layout(state_dir, ledger);
  candidates.set_landed_dir(ledger::Files{layout.ledger}.landed());
  return {std::move(family), std::move(candidates), std::move(layout)};
}

} // namespace kopt::round
