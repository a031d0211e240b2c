#pragma once

#include "fileapi/reply.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kopt::fileapi {

/// What `kopt import` was asked for: a target by name, or the target that compiles a source.
struct ImportRequest {
  std::string target;           ///< target name ("" when `source` picks it)
  std::filesystem::path source; ///< kernel source; picks the target and its compile group
  std::string config;           ///< configuration ("" = the tree's default)
  std::string language;         ///< kernel language ("" = the source's, else CUDA, HIP, CXX, C)
  std::string baseline;         ///< "library", "compile", or "" to choose by the target's type
};

/// One target's compile settings for the kernel's language, and its prebuilt artifact.
struct Imported {
  std::string build_dir;
  std::string target;
  std::string type;
  std::string config;
  std::string language;
  std::string compiler;               ///< absolute compiler path
  std::string host_compiler;          ///< CUDA: the tree's CMAKE_CUDA_HOST_COMPILER (-ccbin)
  std::string standard;               ///< "17", "" when the tree sets none
  std::vector<std::string> fragments; ///< command fragments as cmake passes them
  std::vector<std::string> flags;     ///< the fragments split into arguments
  std::vector<std::string> defines;
  std::vector<Include> includes;
  std::string source;     ///< the source the group was chosen by ("" with --target)
  std::string artifact;   ///< the prebuilt library or executable ("" when the target has none)
  bool separable = false; ///< the tree compiles relocatable device code (-rdc=true)
  std::vector<std::string> rule_args; ///< what the generator's compile rule adds (-x cu ...)
  std::string rule_file;              ///< where that rule was read ("" when not found)
  std::string baseline;               ///< "library": 00 links `artifact`; "compile": 00
                                      ///< compiles its instances with the tree's flags
  std::string baseline_reason;        ///< why that baseline mode, in a sentence
  std::string config_reason;          ///< why this configuration (--config, the tree's default)
  std::vector<std::string> notes;     ///< what the user should know (said on stderr)
};

/// Picks the configuration, target and compile group `request` names in `model`. Unknown
/// targets, sources and configurations throw kopt::Error with the nearest names suggested; a
/// target whose sources of the language compile in groups with different flags throws, listing
/// the groups with a source of each (--source picks one). A HIP group compiled by hipcc (which
/// CMake's HIP language refuses) is imported as CXX with hipcc as the C++ compiler.
Imported select(const CodeModel &model, const ImportRequest &request);

/// A path as the tree's files are compared: absolute, links resolved where they exist, normal.
std::string normal_path(const std::filesystem::path &path);

/// Splits a command fragment into arguments the way a POSIX shell does (quotes, backslashes).
/// `open_quote`, when given, is set to the quote left open at the end (0: none).
std::vector<std::string> split_fragment(const std::string &fragment, char *open_quote = nullptr);

/// The CMake file `kopt import` writes: an INTERFACE target with the imported flags for the
/// kernel language and KOPT_IMPORTED_* variables (see docs/IMPORT.md). The fragments go in as
/// one SHELL: group, in order, so that CMake cannot de-duplicate a repeated word of a two-word
/// option (`-mllvm A -mllvm B`, `--param a=1 --param b=2`).
std::string render_cmake(const Imported &imported);

} // namespace kopt::fileapi
