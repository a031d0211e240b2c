#include "profile/bench.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
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
  int rounds = 0;
  bool best = false;
  bool reuse = false;
  bool golden_only = false;
  bool build_only = false;
  bool allow_failed = false;
};

// Why an existing measurement of `id` cannot be reused, or "" when it can: it must be of the
// same sources measured under the same conditions (and, side by side, beside the same BEST), and
// newer than the binaries.
std::string why_measure_again(const LoadedFamily &loaded, const std::string &id,
                              const ledger::Best &best, const profile::RunSetup &setup) {
  namespace fs = std::filesystem;
  fs::path file = loaded.layout.measurement(id);
  if (!fs::exists(file)) {
    return "no measurement yet";
  }
  for (const std::string &who : {id, best.id}) {
    fs::path harness = loaded.layout.harness(who);
    if (!fs::exists(harness) || fs::last_write_time(file) < fs::last_write_time(harness)) {
      return "candidate_" + who + " was built after the measurement";
    }
  }
  profile::Measurement m = profile::read_measurement(file);
  if (!m.ok()) {
    return "the measurement failed";
  }
  if (id != best.id && (m.paired_best != best.id || m.paired_best_hash != best.hash)) {
    return "measured beside BEST " + m.paired_best + ", BEST is now " + best.id;
  }
  return profile::stale_reason(
      profile::conditions_of(m),
      profile::benchmark_conditions(loaded.family, setup,
                                    loaded.candidates.content_hash(loaded.family, id)));
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
  auto *candidate = app.add_option(
      "--candidate", options->candidate,
      "the candidate id to benchmark, side by side with BEST (alone when it is BEST)");
  auto *best = app.add_flag("--best", options->best, "benchmark BEST (from the ledger) alone");
  auto *golden = app.add_flag("--golden-only", options->golden_only,
                              "only make sure the golden exists (from the baseline)");
  candidate->excludes(best)->excludes(golden);
  best->excludes(golden);
  app.add_option("--rounds", options->rounds,
                 "side-by-side rounds of BEST and the candidate (default: family.json's "
                 "bench.rounds, else 6)")
      ->check(CLI::Range(2, 1000));
  app.add_option(
      "--build-dir", options->build_dir,
      "build the candidate's harness (and the baseline's and BEST's) in this tree first");
  app.add_option("--prefix", options->prefix, "the PREFIX given to kopt_add_family");
  app.add_flag("--build-only", options->build_only,
               "with --build-dir: build the harnesses and stop (measure nothing)");
  app.add_flag("--reuse", options->reuse,
               "keep an existing measurement of the same sources (and BEST) newer than the binary");
  app.add_flag("--allow-failed", options->allow_failed,
               "exit 0 when the candidate's run failed (the measurement records why)");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    std::string baseline = loaded.baseline();
    ledger::Best best = loaded.best();
    std::string requested = options->best          ? best.id
                            : options->golden_only ? baseline
                                                   : options->candidate;
    if (requested.empty()) {
      throw Error("bench: give --candidate <id>, --best or --golden-only");
    }
    const std::string &id = loaded.candidates.get(requested).id();
    std::string identical = loaded.identical_to(id, best);
    if (!identical.empty() && !options->build_only) {
      context.out << "candidate " << id << " is identical to " << identical << " (hash "
                  << loaded.candidates.content_hash(loaded.family, id) << "): nothing to measure\n";
      return 0;
    }
    const std::string &p = options->prefix;
    std::vector<std::string> targets = {p + "candidate_" + baseline, p + "candidate_" + id,
                                        p + "candidate_" + best.id};
    if (options->build_only) {
      if (!options->build_dir.empty() &&
          build_targets(options->build_dir, targets, context.err) != 0) {
        return 1;
      }
      context.out << "built candidate " << id << ", the baseline " << baseline << " and BEST "
                  << best.id << "\n";
      return 0;
    }
    // What needs no run answers before the GPU gate (the keep test's fixtures ask often).
    std::string baseline_hash = loaded.candidates.content_hash(loaded.family, baseline);
    if (options->golden_only &&
        profile::golden_is_current(loaded.family, loaded.layout, baseline_hash)) {
      context.out << "golden up to date (from candidate " << baseline << ")\n";
      return 0;
    }
    std::optional<profile::RunSetup> setup =
        prepare_run(loaded, options->build_dir, targets, options->family.gpu_wait_min, context.err);
    if (!setup) {
      return 1;
    }
    // One bench of a candidate at a time, and no decide or check reading its results between
    // the two measurement files it writes.
    util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
    util::RealProcessRunner runner;
    std::string golden = profile::ensure_golden(loaded.family, loaded.layout, baseline,
                                                baseline_hash, runner, *setup);
    if (options->golden_only) {
      context.out << golden << "\n";
      return 0;
    }
    if (options->reuse) {
      std::string why = why_measure_again(loaded, id, best, *setup);
      if (why.empty()) {
        context.out << "candidate " << id << ": measurement up to date ("
                    << loaded.layout.measurement(id).string() << ")\n";
        return 0;
      }
      (context.json ? context.err : context.out)
          << "candidate " << id << ": measuring again: " << why << "\n";
    }
    profile::Measurement m;
    std::optional<profile::Measurement> best_side;
    // An earlier measurement is of other code, or beside another BEST: an interrupted or
    // failed run must not leave it to be decided on.
    std::filesystem::remove(loaded.layout.paired_best(id));
    std::filesystem::remove(loaded.layout.measurement(id));
    try {
      if (id == best.id) {
        m = profile::run_harness(loaded.family, loaded.layout, id, profile::HarnessMode::benchmark,
                                 runner, *setup);
      } else {
        int rounds = options->rounds > 0 ? options->rounds : loaded.family.rounds;
        std::ostream &progress = context.json ? context.err : context.out;
        progress << "candidate " << id << " side by side with BEST " << best.id << ": " << rounds
                 << " rounds\n";
        // A BEST not yet recorded may be recorded from these samples: one of its runs compares.
        profile::GoldenCheck best_golden =
            best.recorded ? profile::GoldenCheck::skip : profile::GoldenCheck::compare;
        profile::SideBySide side =
            profile::run_side_by_side(loaded.family, loaded.layout, best.id, id, rounds, runner,
                                      *setup, progress, best_golden);
        m = std::move(side.candidate);
        best_side = std::move(side.best);
        profile::write_measurement(loaded.layout.paired_best(id), *best_side);
      }
    } catch (const util::Interrupted &e) {
      throw util::Interrupted(e.signal(), "bench of candidate " + id +
                                              ": no measurement written (" + e.what() + ")");
    }
    profile::write_measurement(loaded.layout.measurement(id), m);

    if (context.json) {
      context.out << profile::to_json(m).dump(2) << "\n";
    } else {
      context.out << "candidate " << id << ": " << golden << "\n";
      if (best_side && !best_side->ok()) {
        context.out << "BEST " << best.id << ": failed: " << best_side->reason << "\n";
      }
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
    bool ok = m.ok() && (!best_side || best_side->ok());
    return ok || options->allow_failed ? 0 : 1;
  };
}

} // namespace kopt::cli
