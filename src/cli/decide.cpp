#include "decide/decide.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct DecideOptions {
  FamilyOptions family;
  std::string candidate;
  decide::Options thresholds;
  bool allow_harness_time = false;
  bool weight_by_count = false;
};

// A missing measurement.json is a failed attempt (nothing comparable), not a tool error.
profile::Measurement measurement_of(const spec::Layout &layout, const std::string &id) {
  std::filesystem::path path = layout.measurement(id);
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? profile::read_measurement(path)
                                           : decide::missing_measurement(id, path);
}

} // namespace

Handler setup_decide(CLI::App &app) {
  auto options = std::make_shared<DecideOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidate, "the candidate id to decide")->required();
  app.add_option("--noise", options->thresholds.noise,
                 "a per-class change smaller than this is a tie (default 0.01)");
  app.add_option("--max-regression", options->thresholds.max_regression,
                 "how much worse a non-target class may get and still keep (default 0.02)");
  app.add_flag("--allow-harness-time", options->allow_harness_time,
               "let harness (events) time decide when no profiler measured either side");
  app.add_flag("--weight-by-count", options->weight_by_count,
               "weigh each config by the configs file's count column (kopt capture merge)");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    const candidate::Candidate &candidate = loaded.candidates.get(options->candidate);
    const std::string &id = candidate.id();
    std::optional<ledger::State> state = ledger::read_state({loaded.layout.ledger});
    std::string best = state ? state->best : loaded.baseline();

    decide::Request request;
    request.target = candidate.spec.target;
    request.expected_hash = loaded.candidates.content_hash(loaded.family, id);
    request.best_hash =
        state ? state->best_hash : loaded.candidates.content_hash(loaded.family, best);
    std::filesystem::path decision_path = loaded.layout.decision(id);
    std::error_code ec;
    if (std::filesystem::exists(decision_path, ec)) {
      request.previous = decide::read_decision(decision_path);
    }
    decide::Options thresholds = options->thresholds;
    thresholds.harness_time =
        options->allow_harness_time ? decide::HarnessTime::allow : decide::HarnessTime::refuse;

    thresholds.weighting =
        options->weight_by_count ? decide::Weighting::count : decide::Weighting::equal;
    decide::Decision decision =
        decide::decide(measurement_of(loaded.layout, best), measurement_of(loaded.layout, id),
                       request, thresholds);
    decide::write_decision(decision_path, decision);
    if (context.json) {
      context.out << decide::to_json(decision).dump(2) << "\n";
    } else {
      context.out << "candidate " << id << " vs BEST " << best << " (target " << decision.target
                  << ")\n"
                  << decide::format_table(decision) << decide::format_verdict(decision);
    }
    return decision.verdict == decide::Verdict::keep ? 0 : 1;
  };
}

} // namespace kopt::cli
