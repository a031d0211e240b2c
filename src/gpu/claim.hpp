#pragma once

#include "gpu/binding.hpp"
#include "gpu/gate.hpp"
#include "util/file_lock.hpp"

#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>

namespace kopt::gpu {

/// A device held for one benchmark: where the run is bound and the lock that keeps every other
/// kopt process of the machine off that device until the claim is dropped.
struct Claim {
  Binding binding;
  std::string slot;    ///< the lock's name: "host" or "gpu-<index>"
  double waited_s = 0; ///< how long the claim waited for its device
  std::unique_ptr<util::FileLock> lock;
};

/// Where the device locks of this machine live: $KOPT_DEVICE_LOCK_DIR, else
/// <temp>/kopt-device-locks (shared by every family and user of the machine).
std::filesystem::path device_lock_dir();

/// Claims a device for one benchmark, so that N benchmarks started together on G devices run at
/// most one per device. A host family takes the `host` slot (one host benchmark at a time: a
/// second one would steal its cores); a GPU that ctest allocated is locked, waiting while another
/// holds it; otherwise the most idle GPU the gate finds whose lock is free is taken, checking
/// again every `poll_s` while a kopt benchmark holds a GPU (and once more after the last one
/// ends: utilisation lags a run's end), every options.recheck_s while GPUs are busy with other
/// work only, until options.give_up_s (binding.gave_up). `waiting` gets a line whenever what the
/// claim waits for changes, naming the GPUs held and their holders' pids.
Claim claim_device(spec::Backend backend, Gate &gate, Clock &clock, const GateOptions &options,
                   const std::map<std::string, std::string> &environment,
                   const std::filesystem::path &lock_dir, std::ostream *waiting, double poll_s = 5);

} // namespace kopt::gpu
