#include "profile/bench.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>

namespace kopt::cli {

namespace {

struct BenchOptions {
  FamilyOptions family;
  std::string candidate;
  std::string build_dir;
  std::string prefix;
  bool best = false;
  bool reuse = false;
  bool golden_only = false;
  bool allow_failed = false;
};

// BEST comes from the ledger; before the first record it is the baseline.
std::string best_candidate(const LoadedFamily &loaded) {
  std::optional<ledger::State> state = ledger::read_state(ledger::Files{loaded.layout.ledger});
  return state ? state->best : loaded.baseline();
}

// A measurement can be reused when it is of the same sources and newer than the binary.
bool measurement_is_fresh(const LoadedFamily &loaded, const std::string &id) {
  namespace fs = std::filesystem;
  fs::path file = loaded.layout.measurement(id);
  fs::path harness = loaded.layout.harness(id);
  if (!fs::exists(file) || !fs::exists(harness) ||
      fs::last_write_time(file) < fs::last_write_time(harness)) {
    return false;
  }
  profile::Measurement m = profile::read_measurement(file);
  return m.ok() && m.hash == loaded.candidates.content_hash(loaded.family, id);
}

// Per-class geomean of the keep metric, for the summary a user reads after a bench.
std::map<std::string, std::pair<int, double>> class_geomeans(const profile::Measurement &m) {
  std::map<std::string, std::pair<int, double>> sums;
  for (const auto &c : m.configs) {
    auto &[n, log_sum] = sums[c.config_class];
    ++n;
    log_sum += std::log(std::max(c.us, 1e-9));
  }
  for (auto &[name, entry] : sums) {
    entry.second = std::exp(entry.second / entry.first);
  }
  return sums;
}

} // namespace

Handler setup_bench(CLI::App &app) {
  auto options = std::make_shared<BenchOptions>();
  options->family.add_to(app);
  auto *candidate =
      app.add_option("--candidate", options->candidate, "the candidate id to benchmark");
  auto *best = app.add_flag("--best", options->best, "benchmark BEST (from the ledger)");
  auto *golden = app.add_flag("--golden-only", options->golden_only,
                              "only make sure the golden exists (from the baseline)");
  candidate->excludes(best)->excludes(golden);
  best->excludes(golden);
  app.add_option("--build-dir", options->build_dir,
                 "build the candidate's harness (and the baseline's) in this tree first");
  app.add_option("--prefix", options->prefix, "the PREFIX given to kopt_add_family");
  app.add_flag("--reuse", options->reuse,
               "keep an existing measurement of the same sources newer than the binary");
  app.add_flag("--allow-failed", options->allow_failed,
               "exit 0 when the candidate's run failed (the measurement records why)");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    std::string baseline = loaded.baseline();
    std::string requested = options->best          ? best_candidate(loaded)
                            : options->golden_only ? baseline
                                                   : options->candidate;
    if (requested.empty()) {
      throw Error("bench: give --candidate <id>, --best or --golden-only");
    }
    const std::string &id = loaded.candidates.get(requested).id();
    const std::string &p = options->prefix;
    std::optional<profile::RunSetup> setup = prepare_run(
        loaded, options->build_dir, {p + "candidate_" + baseline, p + "candidate_" + id},
        options->family.gpu_wait_min, context.err);
    if (!setup) {
      return 1;
    }
    util::RealProcessRunner runner;
    std::string golden = profile::ensure_golden(
        loaded.family, loaded.layout, baseline,
        loaded.candidates.content_hash(loaded.family, baseline), runner, *setup);
    if (options->golden_only) {
      context.out << golden << "\n";
      return 0;
    }
    if (options->reuse && measurement_is_fresh(loaded, id)) {
      context.out << "candidate " << id << ": measurement up to date ("
                  << loaded.layout.measurement(id).string() << ")\n";
      return 0;
    }
    profile::Measurement m = profile::run_harness(loaded.family, loaded.layout, id,
                                                  profile::HarnessMode::benchmark, runner, *setup);
    profile::write_measurement(loaded.layout.measurement(id), m);

    if (context.json) {
      context.out << profile::to_json(m).dump(2) << "\n";
    } else {
      context.out << "candidate " << id << ": " << golden << "\n";
      if (m.ok()) {
        context.out << "candidate " << id << ": " << m.configs.size() << " configs measured by "
                    << profile::to_string(m.measured_by) << " on " << m.device << "\n";
        for (const auto &[name, entry] : class_geomeans(m)) {
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
