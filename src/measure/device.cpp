#include "measure/device.hpp"

#include "gpu/gate.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <cstdlib>

namespace kopt::measure {

namespace {

// A GPU gate that gave up: the ledger stops ("no idle GPU for 60 min").
void stop_ledger(const LoadedFamily &loaded, double gpu_wait_min) {
  ledger::stop_no_idle_gpu(ledger::Files{loaded.layout.ledger}, loaded.family.name, util::utc_now(),
                           static_cast<int>(gpu_wait_min));
}

} // namespace

gpu::Claim claim_device(const LoadedFamily &loaded, double gpu_wait_min, std::ostream &progress) {
  util::RealProcessRunner runner;
  gpu::RealClock clock;
  gpu::GateOptions gate_options = gpu::gate_options_for_wait(gpu_wait_min);
  gpu::Gate gate(runner, clock, gate_options);
  gpu::Claim held =
      gpu::claim_device(loaded.family.backend, gate, clock, gate_options,
                        gpu::binding_environment(), gpu::device_lock_dir(), &progress);
  if (!held.binding.ok && held.binding.gave_up) {
    stop_ledger(loaded, gpu_wait_min);
  }
  return held;
}

gpu::Binding bind_device(const LoadedFamily &loaded, double gpu_wait_min) {
  if (loaded.family.backend == spec::Backend::host) {
    gpu::Binding binding;
    binding.ok = true;
    return binding;
  }
  util::RealProcessRunner runner;
  gpu::RealClock clock;
  gpu::Gate gate(runner, clock, gpu::gate_options_for_wait(gpu_wait_min));
  gpu::Binding binding = gpu::bind(loaded.family.backend, gate, gpu::binding_environment());
  if (!binding.ok && binding.gave_up) {
    stop_ledger(loaded, gpu_wait_min);
  }
  return binding;
}

std::string profiler_choice(const spec::Family &family) {
  const char *env = std::getenv("KOPT_PROFILER");
  if (env == nullptr || *env == '\0') {
    return family.profiler;
  }
  std::string choice = env;
  if (choice != "cupti" && choice != "ncu") {
    throw Error("KOPT_PROFILER: expected cupti or ncu, got '" + util::excerpt(choice) + "'");
  }
  return choice;
}

profile::RunSetup run_setup(const spec::Family &family, const gpu::Binding &binding,
                            util::ProcessRunner &runner) {
  profile::RunSetup setup;
  setup.env = binding.env;
  setup.device = binding.device;
  if (family.backend == spec::Backend::host && family.pin_cpu) {
    // One process at a time on one CPU: left to the scheduler, a host harness run's time
    // varied by 18% from process to process on a 2-core VM, pinned by 0.3%.
    setup.cpu = util::current_cpu();
  }
  if (family.backend == spec::Backend::cuda) {
    setup.profiler = profiler_choice(family);
    gpu::DeviceState state = gpu::nvidia_state(runner, binding.env);
    setup.driver = state.driver;
    setup.clocks = state.clocks;
  }
  return setup;
}

} // namespace kopt::measure
