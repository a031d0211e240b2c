#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "profile/bench.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct BenchOptions {
  FamilyOptions family;
  std::string candidate;
  std::string build_dir;
  bool allow_failed = false;
};

// Per-class geomean of the keep metric, for the summary a user reads after a bench.
std::map<std::string, std::pair<int, double>> class_geomeans(const profile::Measurement& m) {
  std::map<std::string, std::pair<int, double>> sums;
  for (const auto& c : m.configs) {
    auto& [n, log_sum] = sums[c.config_class];
    ++n;
    log_sum += std::log(std::max(c.us, 1e-9));
  }
  for (auto& [name, entry] : sums) {
    entry.second = std::exp(entry.second / entry.first);
  }
  return sums;
}

} // namespace

Handler setup_bench(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidate, "the candidate id to benchmark")->required();
  app.add_option("--build-dir", options->build_dir,
                 "build the candidate's harness (and the baseline's) in this tree first");
  app.add_flag("--allow-failed", options->allow_failed,
               "exit 0 when the candidate's run failed (the measurement records why)");
  return [options](Context& context) {
    LoadedFamily loaded = load_family(options->family);
    const std::string& id = loaded.candidates.get(options->candidate).id();
    std::string baseline = loaded.baseline();
    if (!options->build_dir.empty() &&
        build_targets(options->build_dir, {"candidate_" + baseline, "candidate_" + id},
                      context.err) != 0) {
      return 1;
    }
    util::RealProcessRunner runner;
    std::string golden = profile::ensure_golden(
        loaded.family, loaded.layout, baseline,
        loaded.candidates.content_hash(loaded.family, baseline), runner);
    profile::Measurement m = profile::run_harness(loaded.family, loaded.layout, id,
                                                  profile::HarnessMode::benchmark, runner);
    profile::write_measurement(loaded.layout.measurement(id), m);

    if (context.json) {
      context.out << profile::to_json(m).dump(2) << "\n";
    } else {
      context.out << "candidate " << id << ": " << golden << "\n";
      if (m.ok()) {
        context.out << "candidate " << id << ": " << m.configs.size() << " configs measured by "
                    << profile::to_string(m.measured_by) << " on " << m.device << "\n";
        for (const auto& [name, entry] : class_geomeans(m)) {
          context.out << "  " << name << ": " << entry.first << " configs, geomean "
                      << util::format_number(entry.second, 5) << " us\n";
        }
      } else {
        context.out << "candidate " << id << ": failed: " << m.reason << "\n";
      }
      context.out << "wrote " << loaded.layout.measurement(id).string() << "\n";
    }
    return m.ok() || options->allow_failed ? 0 : 1;
  };
}

} // namespace kopt::cli
