#include "app/app.hpp"
#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/subcommands.hpp"
#include "decide/decide.hpp"
#include "ledger/ledger.hpp"
#include "measure/device.hpp"
#include "profile/measurement.hpp"
#include "round/steps.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace kopt::cli {

namespace {

struct AppOptions {
  FamilyOptions family;
  std::string candidate;
  std::string build_dir;
  std::string prefix;
  int rounds = 0;
};

// The candidate's keep test against BEST, when there is one: the prediction's traffic rows.
std::optional<decide::Decision> keep_test_of(const LoadedFamily &loaded, const std::string &id) {
  std::error_code ec;
  if (!std::filesystem::exists(loaded.layout.decision(id), ec)) {
    return std::nullopt;
  }
  return decide::read_decision(loaded.layout.decision(id));
}

// What candidate `id`'s measurement of its content `hash` (its keep test's, or its bench
// target's) found wrong: an A/B of wrong code is no pass. Nullopt when there is no measurement
// of this content, so that its correctness is unchecked.
std::optional<std::string> measured_problems(const LoadedFamily &loaded, const std::string &id,
                                             const std::string &hash) {
  std::filesystem::path file = loaded.layout.measurement(id);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    return std::nullopt;
  }
  profile::Measurement m = profile::read_measurement(file);
  if (m.hash != hash && m.ok()) {
    return std::nullopt;
  }
  return util::join(decide::correctness_problems(m, id, hash), "; ");
}

// Builds BEST's and `id`'s variants (with --build-dir) and claims the device the A/B runs on
// with kopt round's device locks: an A/B started beside rounds waits for a GPU of its own, and a
// host family's holds the host's cores from its build on, as a round does. Nullopt, after
// saying why, when the A/B cannot run.
std::optional<gpu::Claim> build_and_claim(const LoadedFamily &loaded, const AppOptions &options,
                                          const std::string &best, const std::string &id,
                                          std::ostream &err) {
  bool host = loaded.family.backend == spec::Backend::host;
  gpu::Claim held;
  if (host) {
    held = measure::claim_device(loaded, options.family.gpu_wait_min, err);
  }
  const std::string &p = options.prefix;
  if (!options.build_dir.empty() && build_targets(options.build_dir,
                                                  {p + "candidate_" + best + "_application",
                                                   p + "candidate_" + id + "_application"},
                                                  err) != 0) {
    return std::nullopt;
  }
  if (!host) {
    held = measure::claim_device(loaded, options.family.gpu_wait_min, err);
  }
  if (!held.binding.ok) {
    err << "kopt: GPU gate: " << held.binding.message << "\n";
    return std::nullopt;
  }
  err << "kopt app: running on " << held.binding.message << "\n";
  return held;
}

} // namespace

Handler setup_app(CLI::App &app) {
  auto options = std::make_shared<AppOptions>();
  options->family.add_to(app, &options->build_dir);
  app.add_option("--candidate", options->candidate,
                 "the candidate whose application variant runs beside BEST's")
      ->required();
  app.add_option("--rounds", options->rounds,
                 "side-by-side rounds (default: family.json's app.rounds)")
      ->check(whole_number(2, 1000));
  app.add_option("--build-dir", options->build_dir,
                 "build both variants (candidate_<id>_application) in this tree first");
  app.add_option("--prefix", options->prefix, "the PREFIX given to kopt_add_family");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    if (!loaded.family.app) {
      throw Error(loaded.family.file.string() +
                  ": app: the family names no application (add \"app\": {\"sources\": [...]}, "
                  "docs/FORMATS.md)");
    }
    const std::string &id = loaded.candidates.get(options->candidate).id();
    ledger::Best best = loaded.best();
    std::optional<gpu::Claim> held = build_and_claim(loaded, *options, best.id, id, context.err);
    if (!held) {
      return 1;
    }
    util::RealProcessRunner runner;
    profile::RunSetup setup = measure::run_setup(loaded.family, held->binding, runner);
    app::Sides sides{best.id,
                     best.hash.empty() ? loaded.candidates.content_hash(loaded.family, best.id)
                                       : best.hash,
                     loaded.layout.application(best.id),
                     id,
                     loaded.candidates.content_hash(loaded.family, id),
                     loaded.layout.application(id)};
    decide::Options thresholds = round::keep_options(loaded.family);
    int rounds = options->rounds > 0 ? options->rounds : loaded.family.app->rounds;
    util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
    app::Result result;
    std::optional<std::string> wrong = measured_problems(loaded, id, sides.hash);
    if (!wrong) {
      context.err << "kopt app: candidate " << id << " has no measurement of its content: its "
                  << "correctness is unchecked (its keep test measures and checks it: ctest -L "
                  << "keep -R candidate_" << id << ")\n";
    }
    if (wrong && !wrong->empty()) {
      result = app::refused(loaded.family, sides,
                            "an A/B of wrong code is no pass: candidate " + id +
                                "'s keep test measurement (" +
                                loaded.layout.measurement(id).string() + "): " + *wrong);
    } else if (std::vector<std::string> problems = app::identity_problems(sides);
               !problems.empty()) {
      result = app::refused(loaded.family, sides, "identity: " + util::join(problems, "; "));
    } else {
      result = app::run_ab(loaded.family, sides, rounds, thresholds, keep_test_of(loaded, id),
                           runner, setup);
    }
    std::filesystem::create_directories(loaded.layout.results_dir(id));
    app::write_result(loaded.layout.app_result(id), result);
    if (context.json) {
      context.out << util::dump_json(app::to_json(result)) << "\n";
    } else {
      context.out << app::format_result(result) << "wrote " << loaded.layout.app_result(id).string()
                  << "\n";
    }
    return result.passes() ? 0 : 1;
  };
}

} // namespace kopt::cli
