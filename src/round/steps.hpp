#pragma once

#include "decide/decide.hpp"
#include "ledger/ledger.hpp"
#include "measure/loaded_family.hpp"

#include <string>

namespace kopt::round {

using measure::LoadedFamily;

/// The keep test's options from family.json (`keep`: threshold, confidence, max_regression,
/// weighting).
decide::Options keep_options(const spec::Family &family);

/// The keep test of candidate `id` against `best` from the measurement files in results/<id>/
/// (a missing one is a failed attempt): writes results/<id>/decision.json and returns it. The
/// caller holds the candidate's results lock.
decide::Decision decide_candidate(const LoadedFamily &loaded, const std::string &id,
                                  const ledger::Best &best, const decide::Options &options);

} // namespace kopt::round
