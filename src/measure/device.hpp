#pragma once

#include "gpu/binding.hpp"
#include "gpu/claim.hpp"
#include "measure/loaded_family.hpp"
#include "profile/bench.hpp"
#include "util/process.hpp"

#include <iosfwd>
#include <string>

namespace kopt::measure {

/// Claims the device a benchmark of `loaded`'s family runs on (gpu::claim_device, with the
/// machine's device locks, waiting up to `gpu_wait_min` for an idle GPU): every kopt process
/// that times runs holds one while it does, so a round and an application A/B started beside
/// it never share a GPU, or the host's cores. `progress` gets a line while it waits. A GPU gate
/// that gave up stops the ledger ("no idle GPU for 60 min").
gpu::Claim claim_device(const LoadedFamily &loaded, double gpu_wait_min, std::ostream &progress);

/// Binds a harness run of `loaded`'s family without a device lock: a host family's runs need no
/// gate (always ok); a GPU family's go to the GPU ctest allocated, or the most idle one the gate
/// finds waiting up to `gpu_wait_min` (gpu::bind). A gate that gave up stops the ledger, as
/// claim_device's does.
gpu::Binding bind_device(const LoadedFamily &loaded, double gpu_wait_min);

/// What a harness run of `family` on `binding`'s device needs: its environment and device, and
/// for a cuda family the driver and clocks nvidia-smi reports (measurements record them). A
/// host family's runs are pinned to the CPU kopt runs on now (run kopt under `taskset -c N` to
/// choose it) unless its bench.pin_cpu is false.
profile::RunSetup run_setup(const spec::Family &family, const gpu::Binding &binding,
                            util::ProcessRunner &runner);

/// What times a CUDA family's benchmarks: $KOPT_PROFILER ("cupti" or "ncu") when set, else the
/// family's bench.profiler ("" for kopt's choice). Throws Error for another KOPT_PROFILER.
std::string profiler_choice(const spec::Family &family);

} // namespace kopt::measure
