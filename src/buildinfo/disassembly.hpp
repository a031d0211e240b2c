#pragma once

// The binding rule of the identity check: what the harness's own code calls does not depend on
// a candidate's headers. An object of the harness side compiled with the candidate's headers
// and with the baseline's must hold the same code, function by function, and a weak function
// a candidate's instance defines must have the body the harness's own copy has. Both are read
// from `objdump -d -r`, with what differs between two compiles of the same code taken out.

#include "util/process.hpp"

#include <map>
#include <string>
#include <vector>

namespace kopt::buildinfo {

/// One object's functions by (mangled) symbol, each as its instructions with the addresses, the
/// offsets of relocations against sections (`.text+0x126c`) and the numbers of local constant
/// labels (`.LC12`) and the padding after its last instruction taken out: the same code compiled
/// beside other code reads the same.
using Functions = std::map<std::string, std::vector<std::string>>;

/// The `objdump -d -r -w --no-show-raw-insn` run of one object that parse_objdump reads.
util::Command objdump_command(const std::string &object);

/// Parses `objdump -d -r -w --no-show-raw-insn` output of one object (or the part of several
/// objects' output that one `<file>:     file format` line starts).
Functions parse_objdump(const std::string &text);

/// The symbols a function's relocations name (what it calls, and the data it reads), each once,
/// sections and local labels left out.
std::vector<std::string> callees(const std::vector<std::string> &code);

/// A function the candidate's compile lacks or compiles to other code.
struct CodeChange {
  std::string function;             ///< mangled
  bool missing = false;             ///< not in the candidate's compile at all
  std::vector<std::string> dropped; ///< callees only the baseline's code names
  std::vector<std::string> added;   ///< callees only the candidate's code names
};

/// Every function of `baseline` that `candidate` lacks or compiles to other code, in name order.
/// Functions only the candidate's compile has (its own static initialisers, the templates they
/// instantiate) are not changes: no code of the baseline's calls them without changing itself.
std::vector<CodeChange> code_changes(const Functions &baseline, const Functions &candidate);

/// Says what a change does, demangled: "refers to X instead of Y", "no longer refers to Y",
/// "refers to X" (a function it calls or data it reads),
/// "is not compiled" or, when only its instructions differ (a function of the candidate's
/// inlined), "compiles to other instructions".
std::string describe(const CodeChange &change);

} // namespace kopt::buildinfo
