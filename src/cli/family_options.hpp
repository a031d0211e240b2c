#pragma once

#include "candidate/candidate.hpp"
#include "cli/cli.hpp"
#include "ledger/ledger.hpp"
#include "measure/loaded_family.hpp"
#include "profile/bench.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kopt::cli {

/// The options every family subcommand takes: --spec, --state-dir and --ledger, or none of them
/// in a build folder (and --family where it holds several).
struct FamilyOptions {
  std::string spec;
  std::string state_dir;
  std::string ledger;
  std::string family;       ///< --family: which of the build folder's families
  double gpu_wait_min = 60; ///< how long the GPU gate waits for an idle GPU
  /// The subcommand's --build-dir, when it has one: where the family is looked for first, and
  /// set to the family's build folder when the family was found from there.
  std::string *build_dir = nullptr;

  /// Adds --spec, --state-dir, --family, --ledger and --gpu-wait-min to `app`; `build_dir` is
  /// the subcommand's own --build-dir, if it has one.
  void add_to(CLI::App &app, std::string *build_dir = nullptr);

  /// Fills in --spec and --state-dir (and --ledger) when neither was given, from what
  /// kopt_add_family wrote in the build folder (<build>/kopt/<name>.family.json): the
  /// subcommand's --build-dir, else the current folder or the nearest folder above it that is a
  /// build folder. Throws kopt::Error saying what to give when it cannot.
  void resolve();

  /// The build folder whose kopt_add_family configured this family's state folder (found in
  /// the state folder's parents), or "" when none did.
  std::string registered_build_dir() const;

  /// Resolves, then throws kopt::Error when --state-dir is not a family's state folder: a
  /// mistyped path must not read as a family with nothing recorded yet.
  void require_state_dir();
};

/// A family loaded from FamilyOptions: the spec, its candidates and its state layout.
using measure::LoadedFamily;

/// family.json and the state folder, for the commands that read nothing else (status, log,
/// report): a broken candidate folder must not hide the loop's state.
struct FamilyState {
  spec::Family family;
  spec::Layout layout;
};

/// Requires --state-dir to be a family's state folder (FamilyOptions::require_state_dir), reads
/// family.json and completes a landing a kill stopped half way (saying so on `err`).
FamilyState read_family_state(FamilyOptions &options, std::ostream &err);

/// Prints what a change of the ledger did: with --json an object of `outcome`, the message and
/// the state after, else the message and the ledger's summary line.
void print_recorded(const Context &context, const std::string &outcome,
                    const ledger::Recorded &recorded);

/// Resolves `options`, loads family.json, discovers the candidates and builds the layout.
LoadedFamily load_family(FamilyOptions &options);

/// Where a harness run of this family happens: for host families the CPU kopt is on; for GPU
/// families the GPU ctest allocated, or the most idle one the gate finds (waiting up to
/// `gpu_wait_min`). Returns nullopt after printing why when there is none; giving up after
/// the full wait also stops the ledger ("no idle GPU for 60 min").
std::optional<profile::RunSetup> gpu_setup(const LoadedFamily &loaded, double gpu_wait_min,
                                           std::ostream &err);

/// Runs `cmake --build <build_dir> --target <targets...>`; on failure prints the build's output
/// to `err` and returns 1, else 0.
int build_targets(const std::string &build_dir, const std::vector<std::string> &targets,
                  std::ostream &err);

/// The opening of every subcommand that runs a harness: builds `targets` in `build_dir` (when
/// not empty), then finds where the run happens (gpu_setup). Returns nullopt after printing why
/// the run cannot happen.
std::optional<profile::RunSetup> prepare_run(const LoadedFamily &loaded,
                                             const std::string &build_dir,
                                             const std::vector<std::string> &targets,
                                             double gpu_wait_min, std::ostream &err);

} // namespace kopt::cli
