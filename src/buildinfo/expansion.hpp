#pragma once

// The macro rule of the identity check: a TU of the harness side (harness, registry, dispatch)
// that includes a candidate's editable header must expand, outside the candidate's own lines,
// the same as with the baseline's header. Compile commands are turned into preprocessing
// commands, and the `-E` output is compared by the source lines its linemarkers name.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kopt::buildinfo {

/// A compile command as its preprocessing: the compiler's argv with `-E` (and, for HIP,
/// `--cuda-host-only`: the harness runs on the host) and the folder to run it from.
struct PreprocessCommand {
  std::vector<std::string> argv;
  std::filesystem::path cwd;
};

/// Turns the compile command ninja runs for an object (one line of `ninja -t commands -s`)
/// into its preprocessing: kopt's launcher (`kopt launch-compile --cwd D ... --`, whose D
/// becomes the folder) and ccache are dropped, and so are `-c`, `-o`, and the depfile flags
/// (-MD, -MMD, -MF, -MT, -MQ); the rest runs from `build_dir` unless the launcher names D.
/// Works for g++, clang++, hipcc and nvcc lines, which share these flags.
PreprocessCommand preprocess_command(const std::string &compile_command,
                                     const std::filesystem::path &build_dir);

/// A source line of the expanded TU: the file (as the caller names it) and its line number.
using SourceLine = std::pair<std::string, int>;

/// What a TU expands to, by the source line each output line came from.
struct Expansion {
  std::vector<SourceLine> order;                    ///< lines in the order first expanded
  std::map<SourceLine, std::set<std::string>> text; ///< whitespace-normalised, each distinct
  std::set<std::string> files;                      ///< every file some line came from
};

/// Reads `-E` output (GCC / clang / nvcc linemarkers `# N "file" flags`, or `#line N "file"`).
/// `name_of` maps a linemarker's file to the name lines are kept under, or "" to leave its
/// lines out (the candidate's editable files). Blank lines are left out.
Expansion parse_expansion(const std::string &text,
                          const std::function<std::string(const std::string &)> &name_of);

/// Compares a harness-side TU's expansion with the candidate's headers to the one with the
/// baseline's. A line differs when its texts differ, when a line of the baseline's expansion is
/// missing from the candidate's, or when a file both expand gains a line (a macro switched on
/// an #if). Files that only the candidate's expansion reads (headers its own header includes)
/// have nothing to be compared with and are allowed. Returns the first differing line, in the
/// baseline's order (then the candidate's), or nothing.
std::optional<SourceLine> first_difference(const Expansion &baseline, const Expansion &candidate);

} // namespace kopt::buildinfo
