#pragma once

// The binding rule of the identity check (decide/identity.hpp, expansion_problems): a harness-side
// object compiled with the candidate's headers (as built) and with the baseline's must hold the
// same code, so that no declaration of the candidate (an overload, a template or specialisation,
// a default argument, an operator, a conversion) changes what harness code calls.

#include "buildinfo/symbols.hpp"
#include "util/process.hpp"

#include <functional>
#include <string>
#include <vector>

namespace kopt::decide {

/// One harness-side object: as ninja names it, as built (the candidate's headers), and as
/// compiled with the baseline's (or the baseline's own build of it).
struct BindingPair {
  std::string object;
  std::string built;
  std::string baseline;
};

/// Every global symbol the harness binary links besides the candidate's instances; sets its
/// argument (a problem) when they cannot be read.
using LinkedSymbols = std::function<std::vector<buildinfo::DefinedSymbol>(std::string &)>;

/// The binding rule on each pair: every function the baseline's compile holds is in the built
/// object with the same code (buildinfo::code_changes: the first change of each object is named,
/// with what it refers to instead); what the built object defines and the baseline's compile
/// does not may not be called by the latter (the candidate gave it a body) nor interpose what
/// the harness links (`linked`, read only when something was added). `changed_by` names the
/// candidate's changed files ("candidate 96's gemm_kernel.hpp"). Returns the problems.
std::vector<std::string> binding_problems(const std::vector<BindingPair> &pairs,
                                          const std::string &changed_by,
                                          const LinkedSymbols &linked, util::ProcessRunner &runner);

} // namespace kopt::decide
