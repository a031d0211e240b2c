#pragma once

#include "decide/decide.hpp"
#include "ledger/ledger.hpp"

#include <iosfwd>
#include <optional>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kopt::round {

/// How a round ended; the value is `kopt round`'s exit status (docs/AGENTS.md). 2 is kept for a
/// kopt error (bad option, bad file): the round did not happen.
enum class Ending { keep = 0, not_kept = 1, incorrect = 3, failed = 4, stopped = 5 };

/// What one round is asked: the candidate, where it is built and how it is measured.
struct RoundOptions {
  std::string spec;
  std::string state_dir;
  std::string ledger; ///< empty: <state_dir>/ledger
  std::string id;
  std::string build_dir; ///< empty: the harnesses are built already; no identity check
  std::string prefix;    ///< the PREFIX given to kopt_add_family
  int rounds = 0;        ///< side-by-side rounds; 0: family.json's
  double gpu_wait_min = 60;
  ledger::Options limits;
  int max_remeasure = 3; ///< BEST changed while measuring: measure again at most this often
};

/// The round's answer: the JSON an agent reads (docs/AGENTS.md) and how it ended.
struct RoundResult {
  nlohmann::ordered_json json;
  Ending ending = Ending::failed;
  /// The keep test's decision, for the text answer's per-class table; absent when the round
  /// decided nothing (a stopped ledger).
  std::optional<decide::Decision> decision;
};

/// Runs one round of candidate `options.id`: build (with `--build-dir`), the identity check, a
/// device claim (gpu::claim_device: one benchmark per device), the golden, the side-by-side
/// measurement beside BEST, the keep test and the ledger record, with the library functions the
/// bench, check, decide and record subcommands call. When another round's keep changes BEST
/// while this one measures, it measures again beside the new BEST. `progress` gets one line per
/// step. A stopped ledger runs nothing. It holds the family's lock shared with other rounds
/// (`kopt land` holds it alone), saying in `progress` whom it waits for.
RoundResult run_round(const RoundOptions &options, std::ostream &progress);

/// Returns the exit status's name: "keep", "not_kept", "incorrect", "failed", "stopped".
const char *to_string(Ending ending);

} // namespace kopt::round
