#include "gpu/claim.hpp"

#include "util/temp_root.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <vector>

namespace kopt::gpu {

namespace fs = std::filesystem;

fs::path device_lock_dir() {
  const char *dir = std::getenv("KOPT_DEVICE_LOCK_DIR");
  return dir != nullptr && *dir != '\0' ? fs::path(dir) : util::temp_root() / "kopt-device-locks";
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

// "GPU 1 (pid 4242)" for each GPU of `report` whose lock a kopt benchmark holds.
std::vector<std::string> kopt_holders(const GateReport &report, const fs::path &lock_dir) {
  std::vector<std::string> holders;
  for (const auto &verdict : report.gpus) {
    int gpu = verdict.status.index;
    if (auto pid = util::FileLock::holder(lock_dir / lock_file(gpu_slot(gpu)))) {
      holders.push_back("GPU " + std::to_string(gpu) + (pid->empty() ? "" : " (pid " + *pid + ")"));
    }
  }
  return holders;
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
  // A GPU a kopt benchmark holds is busy with its run: the waiter polls every poll_s until it
  // ends, and one check more after that (the GPU's utilisation lags the run's end), instead of
  // sleeping the gate's long recheck meant for other people's work.
  std::string said;
  bool held_before = false;
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
    std::vector<std::string> holders = kopt_holders(report, lock_dir);
    std::string why = holders.empty()
                          ? "none is idle, and no kopt benchmark holds one"
                          : util::join(holders, " and ") + (holders.size() == 1 ? " is" : " are") +
                                " held by another kopt benchmark";
    if (waiting != nullptr && why != said) {
      *waiting << "kopt: waiting for a GPU: " << why << "\n" << std::flush;
      said = why;
    }
    double next = holders.empty() && !held_before ? options.recheck_s : poll_s;
    held_before = !holders.empty();
    clock.sleep_s(std::min(next, options.give_up_s - waited));
  }
}

} // namespace kopt::gpu
