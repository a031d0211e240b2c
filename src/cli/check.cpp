#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "decide/decide.hpp"
#include "profile/bench.hpp"
#include "round/steps.hpp"
#include "util/file_lock.hpp"
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
  options->family.add_to(app);
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
    util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
    util::RealProcessRunner runner;
    profile::ensure_golden(loaded.family, loaded.layout, baseline,
                           loaded.candidates.content_hash(loaded.family, baseline), runner, *setup);
    std::string expected = loaded.candidates.content_hash(loaded.family, id);

    std::vector<std::string> problems;
    if (!options->build_dir.empty()) {
      for (const auto &p :
           round::identity_problems(loaded, id, options->build_dir, options->prefix)) {
        problems.push_back("identity: " + p);
      }
    }
    profile::Measurement m = profile::run_harness(
        loaded.family, loaded.layout, id, profile::HarnessMode::correctness, runner, *setup);
    for (const auto &p : decide::correctness_problems(m, id, expected)) {
      problems.push_back(p);
    }

    if (context.json) {
      context.out << nlohmann::json{{"candidate", id},           {"correct", problems.empty()},
                                    {"problems", problems},      {"hash", m.hash},
                                    {"expected_hash", expected}, {"configs", m.configs.size()}}
                         .dump(2)
                  << "\n";
    } else if (problems.empty()) {
      context.out << "candidate " << id << ": correct: " << m.configs.size()
                  << " configs, every err == 0 against the golden from candidate " << baseline
                  << "; hash " << expected << "\n";
    } else {
      context.out << "candidate " << id << ": NOT correct\n  " << util::join(problems, "\n  ")
                  << "\n";
    }
    return problems.empty() ? 0 : 1;
  };
}

} // namespace kopt::cli
