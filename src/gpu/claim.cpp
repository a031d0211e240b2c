#include "gpu/claim.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <ostream>

namespace kopt::gpu {

namespace fs = std::filesystem;

fs::path device_lock_dir() {
  const char *dir = std::getenv("KOPT_DEVICE_LOCK_DIR");
  return dir != nullptr && *dir != '\0' ? fs::path(dir)
                                        : fs::temp_directory_path() / "kopt-device-locks";
}

namespace {

std::string gpu_slot(int index) { return "gpu-" + std::to_string(index); }

std::string lock_file(const std::string &slot) { return slot + ".lock"; }

// The idle GPUs of `report` (most idle first), the first whose lock is free claimed.
bool claim_idle(const GateReport &report, const fs::path &lock_dir, Claim &claim) {
  for (int gpu : report.idle) {
    std::unique_ptr<util::FileLock> lock =
        util::FileLock::try_lock(lock_dir / lock_file(gpu_slot(gpu)));
    if (!lock) {
      continue;
    }
    claim.lock = std::move(lock);
    claim.slot = gpu_slot(gpu);
    claim.binding.ok = true;
    claim.binding.env = binding_env(report.tool, gpu);
    for (const auto &verdict : report.gpus) {
      if (verdict.status.index == gpu) {
        claim.binding.device = verdict.status.name;
      }
    }
    claim.binding.message = "idle GPU " + std::to_string(gpu) + " (" +
                            std::string(to_string(report.tool)) + "), locked";
    return true;
  }
  return false;
}

} // namespace

Claim claim_device(spec::Backend backend, Gate &gate, Clock &clock, const GateOptions &options,
                   const std::map<std::string, std::string> &environment, const fs::path &lock_dir,
                   std::ostream *waiting, double poll_s) {
  Claim claim;
  double start = clock.now_s();
  if (backend == spec::Backend::host || environment.contains("CTEST_RESOURCE_GROUP_0_GPUS")) {
    if (backend == spec::Backend::host) {
      claim.binding.ok = true;
      claim.binding.message = "the host";
      claim.slot = "host";
    } else {
      claim.binding = bind(backend, gate, environment);
      int id = ctest_gpu_id(environment.at("CTEST_RESOURCE_GROUP_0_GPUS"));
      claim.slot = gpu_slot(id);
      if (!claim.binding.ok) {
        return claim;
      }
    }
    claim.lock = std::make_unique<util::FileLock>(lock_dir / lock_file(claim.slot), waiting);
    claim.waited_s = clock.now_s() - start;
    return claim;
  }
  bool said = false;
  while (true) {
    GateReport report = gate.check();
    if (!report.ok()) {
      claim.binding.message = report.error;
      return claim;
    }
    if (claim_idle(report, lock_dir, claim)) {
      claim.waited_s = clock.now_s() - start;
      return claim;
    }
    double waited = clock.now_s() - start;
    if (waited >= options.give_up_s) {
      claim.binding.message = "no idle GPU free of other kopt benchmarks for " +
                              util::format_number(options.give_up_s / 60, 3) + " min";
      claim.binding.gave_up = true;
      return claim;
    }
    double next = report.idle.empty() ? options.recheck_s : poll_s;
    if (waiting != nullptr && !said) {
      *waiting << "kopt: waiting for a GPU: "
               << (report.idle.empty() ? "none is idle"
                                       : "every idle GPU is held by another kopt benchmark")
               << "\n"
               << std::flush;
      said = true;
    }
    clock.sleep_s(std::min(next, options.give_up_s - waited));
  }
}

} // namespace kopt::gpu
