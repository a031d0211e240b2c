#include "cli/family_options.hpp"

#include "cli/number_options.hpp"
#include "gpu/binding.hpp"
#include "ledger/ledger.hpp"
#include "round/round.hpp"
#include "round/steps.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <ostream>

namespace kopt::cli {

void FamilyOptions::add_to(CLI::App &app) {
  app.add_option("--spec", spec, "the family's family.json")->required();
  app.add_option("--state-dir", state_dir,
                 "the family's state folder in the build tree (<build>/kopt/<family>)")
      ->required();
  app.add_option("--ledger", ledger, "the ledger folder (default: <state-dir>/ledger)");
  app.add_option("--gpu-wait-min", gpu_wait_min,
                 "GPU families: minutes to wait for an idle GPU (re-checked every 10 min)")
      ->check(finite_number(0))
      ->capture_default_str();
}

void FamilyOptions::require_state_dir() const {
  if (!std::filesystem::is_directory(state_dir)) {
    throw Error("--state-dir " + state_dir +
                ": no such folder (the family's state folder, <build>/kopt/<family>, is made "
                "when its build is configured)");
  }
}

LoadedFamily load_family(const FamilyOptions &options) {
  return round::load(options.spec, options.state_dir, options.ledger);
}

std::optional<profile::RunSetup> gpu_setup(const LoadedFamily &loaded, double gpu_wait_min,
                                           std::ostream &err) {
  util::RealProcessRunner runner;
  if (loaded.family.backend == spec::Backend::host) {
    return round::run_setup(loaded.family, gpu::Binding{}, runner);
  }
  gpu::RealClock clock;
  gpu::Gate gate(runner, clock, gpu::gate_options_for_wait(gpu_wait_min));
  gpu::Binding binding = gpu::bind(loaded.family.backend, gate, gpu::binding_environment());
  if (!binding.ok) {
    err << "kopt: GPU gate: " << binding.message << "\n";
    if (binding.gave_up) {
      ledger::stop_no_idle_gpu(ledger::Files{loaded.layout.ledger}, loaded.family.name,
                               util::utc_now(), static_cast<int>(gpu_wait_min));
    }
    return std::nullopt;
  }
  err << "kopt: GPU gate: " << binding.message << "\n";
  return round::run_setup(loaded.family, binding, runner);
}

int build_targets(const std::string &build_dir, const std::vector<std::string> &targets,
                  std::ostream &err) {
  util::ProcessResult result = round::build_targets(build_dir, targets, &err);
  if (!result.ok()) {
    err << result.out << result.err;
    err << "kopt: building " << util::join(targets, ", ") << " " << result.describe(0) << "\n";
  }
  return result.ok() ? 0 : 1;
}

std::optional<profile::RunSetup> prepare_run(const LoadedFamily &loaded,
                                             const std::string &build_dir,
                                             const std::vector<std::string> &targets,
                                             double gpu_wait_min, std::ostream &err) {
  if (!build_dir.empty() && build_targets(build_dir, targets, err) != 0) {
    return std::nullopt;
  }
  return gpu_setup(loaded, gpu_wait_min, err);
}

} // namespace kopt::cli
