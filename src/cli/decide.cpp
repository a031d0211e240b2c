#include "decide/decide.hpp"
#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "round/steps.hpp"
#include "util/file_lock.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>

namespace kopt::cli {

namespace {

struct DecideOptions {
  FamilyOptions family;
  std::string candidate;
  std::optional<double> noise;
  std::optional<double> confidence;
  std::optional<double> max_regression;
  bool allow_harness_time = false;
  bool allow_mixed_timers = false;
  bool allow_mixed_builds = false;
  bool weight_by_count = false;
  std::string weighting;
};

// Adds an option that overrides family.json's keep.<key>, whose own default is `fallback`.
CLI::Option *add_keep_option(CLI::App &app, const std::string &flag, std::optional<double> &value,
                             const std::string &what, const std::string &key, double fallback) {
  return app.add_option(flag, value,
                        what + " (default: family.json's keep." + key + ", else " +
                            util::format_number(fallback) + ")");
}

} // namespace

Handler setup_decide(CLI::App &app) {
  auto options = std::make_shared<DecideOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidate, "the candidate id to decide")->required();
  add_keep_option(app, "--noise", options->noise,
                  "the threshold: a class's interval beyond it counts at once", "threshold",
                  spec::defaults::keep_threshold)
      ->check(finite_number(0, 1));
  add_keep_option(app, "--confidence", options->confidence,
                  "the confidence of each class's interval", "confidence",
                  spec::defaults::keep_confidence)
      ->check(finite_number(0.5, 0.9999));
  add_keep_option(app, "--max-regression", options->max_regression,
                  "how much worse a non-target class may get and still keep", "max_regression",
                  spec::defaults::keep_max_regression)
      ->check(finite_number(0, 1));
  app.add_flag("--allow-harness-time", options->allow_harness_time,
               "let harness (events) time decide when no profiler measured either side");
  app.add_flag("--allow-mixed-timers", options->allow_mixed_timers,
               "compare BEST and candidate measured by different timers (ncu and the CUPTI "
               "tracer); the verdict says so");
  app.add_flag("--allow-mixed-builds", options->allow_mixed_builds,
               "compare BEST and candidate whose instances were compiled with different flags "
               "(measurement.json's build); the verdict says so");
  app.add_flag("--weight-by-count", options->weight_by_count,
               "weigh each config by the configs file's count column (kopt capture merge); "
               "the same as --weighting count");
  app.add_option("--weighting", options->weighting,
                 "what the verdict is judged on: equal (each config alike), count (geomeans "
                 "weighted by the count column) or traffic (each class's kernel time under the "
                 "application's calls, count x time); default: family.json's keep.weighting")
      ->check(CLI::IsMember({"equal", "count", "traffic"}))
      ->excludes("--weight-by-count");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    const candidate::Candidate &candidate = loaded.candidates.get(options->candidate);
    const std::string &id = candidate.id();
    ledger::Best best = loaded.best();
    // A bench of this candidate writes its two measurement files one after the other.
    util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);

    decide::Options thresholds = round::keep_options(loaded.family);
    thresholds.threshold = options->noise.value_or(thresholds.threshold);
    thresholds.confidence = options->confidence.value_or(thresholds.confidence);
    thresholds.max_regression = options->max_regression.value_or(thresholds.max_regression);
    thresholds.harness_time =
        options->allow_harness_time ? decide::HarnessTime::allow : decide::HarnessTime::refuse;
    thresholds.mixed_timers =
        options->allow_mixed_timers ? decide::MixedTimers::allow : decide::MixedTimers::refuse;
    thresholds.mixed_builds =
        options->allow_mixed_builds ? decide::MixedBuilds::allow : decide::MixedBuilds::refuse;
    if (options->weight_by_count || options->weighting == "count") {
      thresholds.weighting = decide::Weighting::count;
    } else if (options->weighting == "traffic") {
      thresholds.weighting = decide::Weighting::traffic;
    } else if (options->weighting == "equal") {
      thresholds.weighting = decide::Weighting::equal;
    }
    decide::Decision decision = round::decide_candidate(loaded, id, best, thresholds);
    if (context.json) {
      context.out << util::dump_json(decide::to_json(decision)) << "\n";
    } else {
      context.out << "candidate " << id << " vs BEST " << best.id << " (target " << decision.target
                  << "), decided on " << decision.configs << " configs of "
                  << loaded.family.configs.filename().string() << " ("
                  << (decision.configs_hash.empty() ? "hash not recorded"
                                                    : "hash " + decision.configs_hash.substr(0, 8))
                  << ")\n"
                  << decide::format_table(decision) << decide::format_traffic(decision);
      if (decision.speed_of_light) {
        context.out << decide::format_speed_of_light(*decision.speed_of_light);
      }
      context.out << decide::format_verdict(decision);
    }
    return decision.verdict == decide::Verdict::keep ? 0 : 1;
  };
}

} // namespace kopt::cli
