#pragma once

#include "decide/decide.hpp"
#include "gpu/binding.hpp"
#include "gpu/claim.hpp"
#include "ledger/ledger.hpp"
#include "profile/bench.hpp"
#include "round/loaded_family.hpp"
#include "util/process.hpp"

#include <iosfwd>
#include <string>

namespace kopt::round {

/// The keep test's options from family.json (`keep`: threshold, confidence, max_regression,
/// weighting).
decide::Options keep_options(const spec::Family &family);

/// The keep test of candidate `id` against `best` from the measurement files in results/<id>/
/// (a missing one is a failed attempt): writes results/<id>/decision.json and returns it. The
/// caller holds the candidate's results lock.
decide::Decision decide_candidate(const LoadedFamily &loaded, const std::string &id,
                                  const ledger::Best &best, const decide::Options &options);

/// What a harness run of `family` on `binding`'s device needs: its environment and device, and
/// for a cuda family the driver and clocks nvidia-smi reports (measurements record them). A
/// host family's runs are pinned to the CPU kopt runs on now (run kopt under `taskset -c N` to
/// choose it) unless its bench.pin_cpu is false.
profile::RunSetup run_setup(const spec::Family &family, const gpu::Binding &binding,
                            util::ProcessRunner &runner);

/// Claims the device a benchmark of `loaded`'s family runs on (gpu::claim_device, with the
/// machine's device locks, waiting up to `gpu_wait_min` for an idle GPU): every kopt process
/// that times runs holds one while it does, so a round and an application A/B started beside
/// it never share a GPU, or the host's cores. `progress` gets a line while it waits. A GPU gate
/// that gave up stops the ledger ("no idle GPU for 60 min").
gpu::Claim claim_device(const LoadedFamily &loaded, double gpu_wait_min, std::ostream &progress);

/// What times a CUDA family's benchmarks: $KOPT_PROFILER ("cupti" or "ncu") when set, else the
/// family's bench.profiler ("" for kopt's choice). Throws Error for another KOPT_PROFILER.
std::string profiler_choice(const spec::Family &family);

} // namespace kopt::round
