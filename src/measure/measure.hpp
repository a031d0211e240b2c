#pragma once

// The measurement step of `kopt bench` and `kopt round`: build the harnesses, prove the
// candidate's build is its own code, hold a device, make sure of the golden, then measure the
// candidate beside BEST. A step that fails before the run is said as a Failure, and
// write_failed records it as the candidate's measurement.

#include "gpu/claim.hpp"
#include "ledger/ledger.hpp"
#include "measure/loaded_family.hpp"
#include "profile/bench.hpp"
#include "util/progress.hpp"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kopt::measure {

/// How a measurement holds its device.
enum class Hold {
  claim, ///< the machine's device lock (claim_device), a host family's from its build on
  bind,  ///< the gate alone (bind_device), as ctest's resource groups spread the .bench tests
};

/// What one measurement of candidate `id` beside BEST is asked.
struct Request {
  std::string id;
  ledger::Best best;
  std::string build_dir;    ///< build the baseline's, the candidate's and BEST's targets here
  std::string identity_dir; ///< prove the candidate's build from this ninja tree; empty: no check
  std::string prefix;       ///< the PREFIX given to kopt_add_family
  int rounds = 0;           ///< side-by-side rounds; 0: family.json's
  double gpu_wait_min = 60;
  Hold hold = Hold::claim;
  /// No identity check when an ok measurement of the candidate's content is newer than its
  /// harness: a measurement with the check made it, so the binary passed it.
  bool reuse = false;
  std::string baseline_hash; ///< the baseline's content hash when the caller has it; "": hashed
};

/// Why a measurement could not be made.
struct Failure {
  std::string step;   ///< "build", "identity" or "gpu"
  std::string reason; ///< one line: "building T exit 2", "identity: ...", "GPU gate: ..."
  std::string output; ///< a failed build's output
  /// The failed measurement's reason: `reason`, for a build with its output's first error.
  std::string recorded() const;
};

/// What the caller says while the steps run; each may be left empty.
struct Notes {
  std::function<void(const std::vector<std::string> &targets)> building;
  std::function<void(const gpu::Binding &binding)> held; ///< the device is held
};

/// A measurement ready to run: its device held, the run's setup, the golden made.
struct Prepared {
  std::optional<Failure> failure; ///< set: the steps stopped there, and nothing below is set
  gpu::Claim held;                ///< under Hold::bind, without a lock
  profile::RunSetup setup;
  std::string golden; ///< what profile::ensure_golden did
  double from = 0;    ///< when the device was held (Unix seconds)
  double to = 0;      ///< when run() ended
};

/// The targets a measurement builds: the prefixed candidate_<id> of the baseline, the candidate
/// and BEST, each once.
std::vector<std::string> targets(const LoadedFamily &loaded, const Request &request);

/// Builds the targets (with a build_dir), checks the candidate's identity (with an
/// identity_dir), holds a device as request.hold says (a host family's claim before the build)
/// and makes sure of the golden. The caller holds the candidate's results lock; `progress` gets
/// the claim's waiting lines. A broken build folder or a failed golden is a kopt::Error.
Prepared prepare(const LoadedFamily &loaded, const Request &request, std::ostream &progress,
                 const Notes &notes = {});

/// Measures the candidate beside BEST on the prepared device (profile::bench_candidate), then
/// lets the device go (its claim's lock) and sets prepared.to.
profile::BenchRun run(const LoadedFamily &loaded, const Request &request, Prepared &prepared,
                      util::Progress &progress);

/// Why the existing measurement of request.id cannot stand for a run on `setup`'s device beside
/// request.best (profile::why_measure_again), or "" when it stands.
std::string why_measure_again(const LoadedFamily &loaded, const Request &request,
                              const profile::RunSetup &setup);

/// The setup any binding would give, known before a gate samples a GPU (seconds): on a CUDA
/// machine whose GPUs are all of one model and driver (one nvidia-smi query), their device,
/// driver and the profiler; nullopt for another backend or GPUs that differ.
std::optional<profile::RunSetup> one_model_setup(const LoadedFamily &loaded);

/// Writes candidate `id`'s failed measurement (its content hash, today's date and `reason`) and
/// removes the BEST measured beside it, so that the keep test gives `failed` and nothing
/// decides it against an earlier pair. The caller holds its results lock. Returns what it wrote.
profile::Measurement write_failed(const LoadedFamily &loaded, const std::string &id,
                                  const std::string &reason);

} // namespace kopt::measure
