#include "cli/family_options.hpp"

#include "util/error.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <ostream>

namespace kopt::cli {

void FamilyOptions::add_to(CLI::App& app) {
  app.add_option("--spec", spec, "the family's family.json")->required();
  app.add_option("--state-dir", state_dir,
                 "the family's state folder in the build tree (<build>/kopt/<family>)")
      ->required();
  app.add_option("--ledger", ledger, "the ledger folder (default: <state-dir>/ledger)");
}

std::string LoadedFamily::baseline() const {
  for (const auto& c : candidates.all()) {
    if (c.spec.base.empty()) {
      return c.id();
    }
  }
  throw Error(family.file.string() + ": no baseline candidate (one without 'base')");
}

LoadedFamily load_family(const FamilyOptions& options) {
  spec::Family family = spec::load_family(options.spec);
  candidate::CandidateSet candidates = candidate::CandidateSet::discover(family);
  spec::Layout layout(options.state_dir, options.ledger);
  return {std::move(family), std::move(candidates), std::move(layout)};
}

int build_targets(const std::string& build_dir, const std::vector<std::string>& targets,
                  std::ostream& err) {
  util::RealProcessRunner runner;
  util::Command command;
  command.argv = {"cmake", "--build", build_dir, "--target"};
  command.argv.insert(command.argv.end(), targets.begin(), targets.end());
  util::ProcessResult result = runner.run(command);
  if (!result.ok()) {
    err << result.out << result.err;
    err << "kopt: building " << util::join(targets, ", ") << " " << result.describe(0) << "\n";
  }
  return result.ok() ? 0 : 1;
}

} // namespace kopt::cli
