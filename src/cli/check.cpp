#include "decide/check.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "profile/bench.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct CheckOptions {
  FamilyOptions family;
  std::string candidate;
  std::string build_dir;
  std::string prefix;
  bool build = false;
};

} // namespace

Handler setup_check(CLI::App &app) {
  auto options = std::make_shared<CheckOptions>();
  options->family.add_to(app, &options->build_dir);
  app.add_option("--candidate", options->candidate, "the candidate id to check")->required();
  app.add_option("--build-dir", options->build_dir,
                 "the build tree: its ninja deps prove which sources the candidate compiled");
  app.add_flag("--build", options->build, "build the harnesses in --build-dir first");
  app.add_option("--prefix", options->prefix, "the PREFIX given to kopt_add_family");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    const std::string &id = loaded.candidates.get(options->candidate).id();
    std::string baseline = loaded.baseline();
    std::optional<profile::RunSetup> setup = prepare_run(
        loaded, options->build ? options->build_dir : "",
        {options->prefix + "candidate_" + baseline, options->prefix + "candidate_" + id},
        options->family.gpu_wait_min, context.err);
    if (!setup) {
      return 1;
    }
    util::RealProcessRunner runner;
    decide::CheckResult check = decide::check_candidate(
        loaded.family, loaded.candidates, loaded.layout,
        {id, options->build_dir, options->prefix, baseline}, runner, *setup, context.err);
    const std::vector<std::string> &problems = check.problems;
    if (context.json) {
      context.out << util::dump_json(nlohmann::json{{"candidate", id},
                                                    {"correct", problems.empty()},
                                                    {"problems", problems},
                                                    {"hash", check.hash},
                                                    {"expected_hash", check.expected_hash},
                                                    {"configs", check.configs}})
                  << "\n";
    } else if (problems.empty()) {
      context.out << "candidate " << id << ": correct: " << check.configs
                  << " configs, every err == 0 against the golden from candidate " << baseline
                  << "; hash " << check.expected_hash << "\n";
    } else {
      context.out << "candidate " << id << ": NOT correct\n  " << util::join(problems, "\n  ")
                  << "\n";
    }
    return problems.empty() ? 0 : 1;
  };
}

} // namespace kopt::cli
