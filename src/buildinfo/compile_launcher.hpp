#pragma once

#include "util/process.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kopt::buildinfo {

/// Rewrites one compile command (as ninja runs it from `build_dir`) to run from `cwd` instead:
/// relative output paths (-o, -MF, @response files) become absolute, so that ccache, with
/// base_dir set, sees the same relative paths for every candidate folder of the same shape.
std::vector<std::string> rewrite_compile_args(const std::vector<std::string> &args,
                                              const std::filesystem::path &build_dir);

/// Rewrites a make-style depfile written from `cwd`: relative dependencies become absolute
/// (ninja reads them relative to the build folder) and the target becomes `target` (a ccache
/// hit returns the depfile of whichever candidate compiled first). Returns the new text.
std::string rewrite_depfile(const std::string &text, const std::filesystem::path &cwd,
                            const std::string &target);

/// Runs `args` (a compile command, typically `ccache <compiler> ...`) from `cwd` with ccache's
/// base_dir set to `base_dir` and its remote_storage to the entries of `remote_storage` that
/// answer (a warning on stderr names the others; empty: ccache's own setting), passes its
/// output through, fixes the depfile named by -MF and returns the compiler's exit status.
int launch_compile(const std::vector<std::string> &args, const std::filesystem::path &cwd,
                   const std::filesystem::path &base_dir, util::ProcessRunner &runner,
                   const std::string &remote_storage = "");

} // namespace kopt::buildinfo
