#pragma once

// The parts of `kopt check`'s identity check that treat candidate code as hostile: its instance
// objects may define only their own symbols, and its headers may not change the harness's code.

#include "buildinfo/ninja_deps.hpp"
#include "candidate/candidate.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/process.hpp"

#include <string>
#include <vector>

namespace kopt::decide {

/// Where the check looks: the candidate, its harness target's name and the build tree.
struct IdentityScope {
  std::string id;       ///< the candidate
  std::string baseline; ///< whose headers the expansion is compared with ("": no comparison)
  std::string target;   ///< prefix + "candidate_" + id
  std::string build_dir;
};

/// Reads every instance object of the candidate's target with `nm` and refuses each global
/// symbol that the harness binary's other link inputs also define (buildinfo::interpositions):
/// its own objects and static archives (from ninja's link command) and the shared libraries it
/// loads (`ldd` of the built binary, `nm -D`); and each weak function it defines with other
/// instructions than the target's harness objects' copy (objdump). Returns one problem per
/// refused symbol.
std::vector<std::string> symbol_problems(const spec::Family &family,
                                         const candidate::CandidateSet &candidates,
                                         const spec::Layout &layout, const IdentityScope &scope,
                                         const buildinfo::NinjaDeps &deps,
                                         util::ProcessRunner &runner);

/// Preprocesses each non-instance object of the candidate's target whose deps include one of
/// its editable files (harness, registry, dispatch) with its own compile command, once with the
/// candidate's headers and once with the baseline's, and refuses the first line outside the
/// editable files that expands differently (buildinfo::first_difference). Where the expansions
/// agree, the binding rule (decide/binding.hpp) compares the built object's code with the
/// object's compile with the baseline's headers: the baseline's own build of it where that is
/// up to date and compiled by the same line from the same generated files, else a compile into
/// the state's tmp folder. Skipped when the candidate's editable files are the baseline's.
std::vector<std::string> expansion_problems(const spec::Family &family, const spec::Layout &layout,
                                            const IdentityScope &scope,
                                            const buildinfo::NinjaDeps &deps,
                                            util::ProcessRunner &runner);

} // namespace kopt::decide
