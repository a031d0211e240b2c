#include "round/round.hpp"
#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/subcommands.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct RoundCliOptions {
  FamilyOptions family;
  round::RoundOptions round;
};

} // namespace

Handler setup_round(CLI::App &app) {
  auto options = std::make_shared<RoundCliOptions>();
  options->family.add_to(app, &options->round.build_dir);
  app.add_option("--id", options->round.id, "the candidate to run the round of")->required();
  app.add_option("--build-dir", options->round.build_dir,
                 "build the harnesses in this tree first and prove their sources (ninja deps)");
  app.add_option("--prefix", options->round.prefix, "the PREFIX given to kopt_add_family");
  app.add_option("--rounds", options->round.rounds,
                 "side-by-side rounds (default: family.json's bench.rounds, else 6)")
      ->check(whole_number(2, 1000));
  app.add_option("--max-consecutive", options->round.limits.max_consecutive,
                 "stop after this many consecutive measured regressions (default 5)")
      ->check(whole_number(1));
  app.add_flag("--allow-other-build", options->round.limits.allow_other_build,
               "record a measurement of another build than BEST was recorded with (another "
               "optimisation level or flags); the attempt's row names its build");
  return [options](Context &context) {
    options->family.resolve();
    round::RoundOptions request = options->round;
    if (request.build_dir.empty()) {
      // A round builds what it measures: an unbuilt or stale candidate is never recorded as
      // failed for want of --build-dir when the family's build folder is known.
      request.build_dir = options->family.registered_build_dir();
    }
    request.spec = options->family.spec;
    request.state_dir = options->family.state_dir;
    request.ledger = options->family.ledger;
    request.gpu_wait_min = options->family.gpu_wait_min;
    round::RoundResult result = round::run_round(request, context.err);
    if (context.json) {
      context.out << util::dump_json(result.json) << "\n";
    } else {
      const auto &j = result.json;
      if (result.decision && !result.decision->classes.empty()) {
        context.out << decide::format_table(*result.decision)
                    << decide::format_traffic(*result.decision);
      }
      context.out << "candidate " << j["candidate"].get<std::string>() << ": "
                  << j["verdict"].get<std::string>() << " (" << j["reason"].get<std::string>()
                  << ")\nnext: " << j["next"]["text"].get<std::string>() << "\n";
    }
    return static_cast<int>(result.ending);
  };
}

} // namespace kopt::cli
