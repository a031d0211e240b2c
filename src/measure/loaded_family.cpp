#include "measure/loaded_family.hpp"

#include "util/process.hpp"

#include <ostream>

namespace kopt::measure {

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

void complete_land(const spec::Family &family, const spec::Layout &layout, std::ostream &err,
                   candidate::FamilyLock lock) {
  if (!candidate::land_pending(layout)) {
    return;
  }
  ledger::Files files{layout.ledger};
  auto record_line = [&](const nlohmann::json &line) { ledger::record_land(files, line); };
  util::RealProcessRunner runner;
  for (const std::string &note :
       candidate::complete_land(family, layout, record_line, runner, lock)) {
    err << "kopt: " << note << "\n" << std::flush;
  }
}

} // namespace kopt::measure
