#include "round/loaded_family.hpp"

namespace kopt::round {

std::string LoadedFamily::baseline() const { return ledger::baseline(family, candidates); }

ledger::Best LoadedFamily::best(ledger::ContentCheck check) const {
  return ledger::resolve_best(ledger::Files{layout.ledger}, family, candidates, check);
}

std::string LoadedFamily::identical_to(const std::string &id, const ledger::Best &best) const {
  if (id == best.id) {
    return "";
  }
  std::string hash = candidates.content_hash(family, id);
  if (hash == best.hash) {
    return "BEST " + best.id;
  }
  std::optional<ledger::State> state = ledger::read_state(ledger::Files{layout.ledger});
  if (state) {
    for (const ledger::RecordedAttempt &attempt : state->recorded) {
      if (attempt.hash == hash && attempt.candidate != id) {
        return attempt.candidate;
      }
    }
    for (const ledger::KeptRow &kept : state->kept) {
      if (kept.hash == hash && kept.candidate != id) {
        return kept.candidate;
      }
    }
  }
  return "";
}

LoadedFamily load(const std::string &spec, const std::string &state_dir,
                  const std::string &ledger) {
  spec::Family family = spec::load_family(spec);
  candidate::CandidateSet candidates = candidate::CandidateSet::discover(family);
  spec::Layout layout(state_dir, ledger);
  return {std::move(family), std::move(candidates), std::move(layout)};
}

} // namespace kopt::round
