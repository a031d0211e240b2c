#pragma once

#include "candidate/candidate.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kopt::cli {

/// The options every family subcommand takes: --spec, --state-dir and --ledger.
struct FamilyOptions {
  std::string spec;
  std::string state_dir;
  std::string ledger;

  /// Adds --spec and --state-dir (both required) and --ledger to `app`.
  void add_to(CLI::App& app);
};

/// A family loaded from FamilyOptions: the spec, its candidates and its state layout.
struct LoadedFamily {
  spec::Family family;
  candidate::CandidateSet candidates;
  spec::Layout layout;

  /// The baseline: the candidate without a base (00 by convention).
  std::string baseline() const;
};

/// Loads family.json, discovers the candidates and builds the layout.
LoadedFamily load_family(const FamilyOptions& options);

/// Runs `cmake --build <build_dir> --target <targets...>`; on failure prints the build's output
/// to `err` and returns 1, else 0.
int build_targets(const std::string& build_dir, const std::vector<std::string>& targets,
                  std::ostream& err);

} // namespace kopt::cli
