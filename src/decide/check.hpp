#pragma once

#include "candidate/candidate.hpp"
#include "profile/bench.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/process.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace kopt::decide {

/// What `kopt check` asks: which candidate, and the build tree whose ninja deps prove which
/// sources it compiled (none: no identity check).
struct CheckRequest {
  std::string id;
  std::string build_dir; ///< empty: the build's identity is not checked
  std::string prefix;    ///< the PREFIX given to kopt_add_family
  std::string baseline;  ///< the baseline, whose harness writes the golden (ledger::baseline)
};

/// The outcome of a correctness check: every problem found (none: correct).
struct CheckResult {
  std::string id;
  std::string hash;          ///< the hash the harness printed
  std::string expected_hash; ///< the candidate's content hash
  std::size_t configs = 0;   ///< configs the harness ran
  std::vector<std::string> problems;

  bool correct() const { return problems.empty(); }
};

/// Proves from ninja's recorded dependencies in `build_dir` that candidate `id`'s objects were
/// compiled from its own generated sources (a worktree build can silently pick up the baseline's
/// files), that its instance objects define no symbol the harness binary's other inputs define
/// (decide/identity.hpp, symbol_problems), and that its headers expand the harness's own TUs as
/// `baseline`'s do (expansion_problems); returns the problems, empty when it holds.
std::vector<std::string> identity_problems(const spec::Family &family,
                                           const candidate::CandidateSet &candidates,
                                           const spec::Layout &layout, const std::string &id,
                                           const std::string &baseline,
                                           const std::string &build_dir, const std::string &prefix,
                                           util::ProcessRunner &runner);

/// Checks candidate `request.id` for correctness: makes sure the golden is the baseline's, proves
/// from the build's ninja deps (when `request.build_dir` is set) that the candidate's objects
/// were compiled from its own generated sources ("identity: ..." problems), then runs its
/// harness in correctness mode and applies correctness_problems(). Holds the candidate's results
/// lock (waiting messages go to `err`).
CheckResult check_candidate(const spec::Family &family, const candidate::CandidateSet &candidates,
                            const spec::Layout &layout, const CheckRequest &request,
                            util::ProcessRunner &runner, const profile::RunSetup &setup,
                            std::ostream &err);

} // namespace kopt::decide
