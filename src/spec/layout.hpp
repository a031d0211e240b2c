#pragma once

#include <filesystem>
#include <string>

namespace kopt::spec {

/// Where a family's build-time state lives under its state folder (by default
/// `<build>/kopt/<family>`): generated sources, harness binaries, results, golden, ledger.
struct Layout {
  std::filesystem::path root;   ///< the state folder
  std::filesystem::path ledger; ///< the ledger folder (default root/ledger)

  /// Builds the layout; an empty `ledger` means root/ledger.
  Layout(std::filesystem::path root, std::filesystem::path ledger = {});

  std::filesystem::path gen_root() const { return root / "gen"; }
  std::filesystem::path gen_dir(const std::string &id) const { return gen_root() / id; }
  std::filesystem::path harness(const std::string &id) const {
    return root / "bin" / ("candidate_" + id);
  }
  /// Candidate `id`'s variant of the family's application (family.json "app").
  std::filesystem::path application(const std::string &id) const {
    return root / "bin" / "app" / ("candidate_" + id);
  }
  std::filesystem::path results_dir(const std::string &id) const { return root / "results" / id; }
  /// The last application A/B of candidate `id` against BEST (kopt app).
  std::filesystem::path app_result(const std::string &id) const {
    return results_dir(id) / "app.json";
  }
  std::filesystem::path results_csv(const std::string &id) const {
    return results_dir(id) / "results.csv";
  }
  std::filesystem::path measurement(const std::string &id) const {
    return results_dir(id) / "measurement.json";
  }
  /// BEST's samples from candidate `id`'s side-by-side run (measurement.json holds the
  /// candidate's).
  std::filesystem::path paired_best(const std::string &id) const {
    return results_dir(id) / "best_measurement.json";
  }
  /// What `kopt calibrate` learned: BEST measured beside itself.
  std::filesystem::path calibration() const { return root / "results" / "calibration.json"; }
  std::filesystem::path decision(const std::string &id) const {
    return results_dir(id) / "decision.json";
  }
  /// The lock file (util::FileLock) a process holds while it changes what `name` names:
  /// "results-<id>" (a candidate's results folder), "tune-<id>", "golden".
  std::filesystem::path lock(const std::string &name) const {
    return root / "locks" / (name + ".lock");
  }
  std::filesystem::path golden() const { return root / "golden" / "golden.bin"; }
  std::filesystem::path golden_info() const { return root / "golden" / "golden.json"; }
};

} // namespace kopt::spec
