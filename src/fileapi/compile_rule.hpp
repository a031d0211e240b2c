#pragma once

#include "fileapi/reply.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kopt::fileapi {

/// The compile rule cmake's generator wrote for one target, language and configuration: what
/// the rule itself puts on a compile line beside the File API's fragments, defines and
/// includes (nvcc's -rdc=true under CUDA_SEPARABLE_COMPILATION, `-x cu`).
struct CompileRule {
  std::string file;                   ///< the generator file it was read from
  std::vector<std::string> arguments; ///< the rule's own arguments, without the compiler,
                                      ///< placeholders, -c/-o and dependency-file options
  /// True when the rule compiles relocatable device code (-rdc=true, -fgpu-rdc).
  bool separable() const;
};

/// Reads the compile rule of `target` for `language` in `config` from the Ninja generators'
/// CMakeFiles/rules.ninja or a Makefile generator's build.make; nullopt when the tree's
/// generator wrote none of them (or no rule for that target).
std::optional<CompileRule> read_compile_rule(const CodeModel &model, const Target &target,
                                             const std::string &language,
                                             const std::string &config);

} // namespace kopt::fileapi
