#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/progress.hpp"
#include "cli/subcommands.hpp"
#include "decide/decide.hpp"
#include "util/file_lock.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct CalibrateOptions {
  FamilyOptions family;
  int rounds = 0;
  bool quiet = false;
};

} // namespace

Handler setup_calibrate(CLI::App &app) {
  auto options = std::make_shared<CalibrateOptions>();
  options->family.add_to(app);
  app.add_option("--rounds", options->rounds,
                 "side-by-side rounds (default: family.json's bench.rounds, else " +
                     std::to_string(spec::defaults::rounds) + ")")
      ->check(whole_number(2, 1000));
  add_quiet_option(app, options->quiet);
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    ledger::Best best = loaded.best();
    std::optional<profile::RunSetup> setup =
        gpu_setup(loaded, options->family.gpu_wait_min, context.err);
    if (!setup) {
      return 1;
    }
    // The A/A's rounds go to BEST's results folder.
    util::FileLock lock(loaded.layout.lock("results-" + best.id), &context.err);
    util::RealProcessRunner runner;
    int rounds = options->rounds > 0 ? options->rounds : loaded.family.rounds;
    std::unique_ptr<util::StatusLine> progress = status_line(context, options->quiet);
    progress->begin("BEST " + best.id + " side by side with itself: " + std::to_string(rounds) +
                        " rounds",
                    2 * static_cast<size_t>(rounds));
    // The same binary on both sides: an A/A whose intervals are the machine's resolution.
    profile::SideBySide side = profile::run_side_by_side(
        loaded.family, loaded.layout, best.id, best.id, rounds, runner, *setup, *progress);
    progress->end();
    decide::Request request;
    request.best_hash = best.hash;
    side.candidate.candidate = best.id + " (A/A)";
    decide::Options thresholds;
    thresholds.threshold = loaded.family.keep_threshold;
    thresholds.confidence = loaded.family.keep_confidence;
    decide::Decision aa = decide::decide(side.best, side.candidate, request, thresholds);
    decide::Calibration calibration = decide::calibration_from(aa);
    calibration.device = side.best.device;
    decide::write_calibration(loaded.layout.calibration(), calibration);
    if (context.json) {
      context.out << util::dump_json(decide::to_json(calibration)) << "\n";
      return 0;
    }
    context.out << decide::format_table(aa);
    for (const decide::Resolution &r : calibration.classes) {
      context.out << "resolution " << r.config_class << ": +-"
                  << decide::format_change(r.half_width).substr(1)
                  << (r.half_width > thresholds.threshold ? " (above the threshold)" : "") << "\n";
    }
    context.out << "wrote " << loaded.layout.calibration().string() << "\n";
    return 0;
  };
}

} // namespace kopt::cli
