#pragma once

// The compile launcher (`kopt launch-compile`): every candidate compile runs from the candidate's
// own folder through ccache, and its depfile and diagnostics are rewritten to name the user's
// files. The remote cache check it makes first is in remote_cache.hpp.

#include "util/process.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::buildinfo {

/// Rewrites one compile command (as ninja runs it from `build_dir`) to run from `cwd` instead:
/// relative output paths (-o, -MF, @response files) become absolute, so that ccache, with
/// base_dir set, sees the same relative paths for every candidate folder of the same shape.
std::vector<std::string> rewrite_compile_args(const std::vector<std::string> &args,
                                              const std::filesystem::path &build_dir);

/// Rewrites a make-style depfile written from `cwd`: relative dependencies become absolute
/// (ninja reads them relative to the build folder), or relative to `build_dir` where ninja could
/// not read the absolute path back (ninja_depfile_word: a `'` in a folder above both), and the
/// target becomes `target` (a ccache hit returns the depfile of whichever candidate compiled
/// first). Returns the new text.
std::string rewrite_depfile(const std::string &text, const std::filesystem::path &cwd,
                            const std::string &target, const std::filesystem::path &build_dir);

/// Where one generated file of a candidate's folder came from (manifest.json's "sources").
struct SourceOrigin {
  std::filesystem::path file; ///< the user's file: the candidate's own copy, or the family's
  int first_line = 0;         ///< the generated lines that come from `file` (0, 0: every line)
  int last_line = 0;
  int line_offset = 0; ///< added to a generated line number gives the line in `file`
};

/// Reads the origins `dir`/manifest.json lists, keyed by the path relative to `dir`
/// ("src/gemm_kernel.hpp", "instances/<name>.cpp"); empty when there is no such file or list.
std::map<std::string, SourceOrigin> read_source_origins(const std::filesystem::path &dir);

/// Rewrites compiler output so that it names the user's files: every `path:line` (or `path:`)
/// whose path, relative to `dir` or absolute, is a generated copy in `origins` becomes the
/// origin's file and line. Lines of a TU that no template line made stay as they are. Another
/// existing file named by a relative path (`../../src/fam/harness.cpp`) is named absolute.
std::string rewrite_diagnostics(const std::string &text, const std::filesystem::path &dir,
                                const std::map<std::string, SourceOrigin> &origins);

/// Runs `args` (a compile command, typically `ccache <compiler> ...`) from `cwd` with ccache's
/// base_dir set to `base_dir` and its remote_storage to the entries of `remote_storage` that
/// answer (a warning on stderr names the others; empty: ccache's own setting), passes its
/// output through rewrite_diagnostics (with `cwd`'s origins), fixes the depfile named by -MF
/// and returns the compiler's exit status.
int launch_compile(const std::vector<std::string> &args, const std::filesystem::path &cwd,
                   const std::filesystem::path &base_dir, util::ProcessRunner &runner,
                   const std::string &remote_storage = "");

} // namespace kopt::buildinfo
