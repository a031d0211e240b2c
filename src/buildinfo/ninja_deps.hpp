#pragma once

// Ninja's recorded dependencies (`ninja -t deps`) and the identity check `kopt check` makes
// with them: a candidate's objects were compiled from its own generated sources.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::buildinfo {

/// The dependencies ninja recorded for each object (`ninja -t deps`): object path -> the
/// headers and sources its last compile read.
using NinjaDeps = std::map<std::string, std::vector<std::string>>;

/// Parses the text `ninja -t deps` prints: an unindented `<output>: #deps N, deps mtime M
/// (VALID|STALE)` line followed by one indented path per dependency. Relative paths (ninja's
/// are relative to the build folder) are made absolute against `build_dir`.
NinjaDeps parse_ninja_deps(const std::string &text, const std::filesystem::path &build_dir);

/// Whether ninja's depfile parser can read `path` back whole: besides letters, digits and
/// `+,/_:.~()}{%=@[]!-` and bytes of non-ASCII characters, it reads a space, `#` and `$` escaped
/// (`\ `, `\#`, `$$`) and nothing else: a `'`, `"`, `&`, `;` or a control character ends the
/// name there, and a backslash is read as part of the name.
bool ninja_depfile_can_hold(const std::string &path);

/// `path` as one word of a depfile ninja reads, escaped (`\ `, `\#`, `$$`). An absolute path
/// that ninja could not read whole is written relative to `build_dir` (where ninja runs and
/// against which it reads relative names) when that form can be read.
std::string ninja_depfile_word(const std::filesystem::path &path,
                               const std::filesystem::path &build_dir);

/// Proof that a candidate's objects were compiled from its own generated sources.
struct IdentityCheck {
  bool ok = false;
  int objects = 0;                   ///< the candidate's objects ninja has deps for
  std::vector<std::string> problems; ///< one line per object compiled from foreign sources
};

/// Checks the deps of the objects of target `target` (paths containing `<target>.dir/`, or
/// `<target>_instances.dir/` for an IMPORTED family's instance TUs): each
/// object under the family's generated folder `gen_root` may read generated files of `gen_dir`
/// only, and at least one object must have read `gen_dir/src/<header>`. `foreign` lists folders
/// no object of this candidate may read (other candidates' folders). No deps at all fails: the
/// build was not made by ninja, or the target was never built.
IdentityCheck check_identity(const NinjaDeps &deps, const std::string &target,
                             const std::filesystem::path &gen_root,
                             const std::filesystem::path &gen_dir, const std::string &header,
                             const std::vector<std::filesystem::path> &foreign);

} // namespace kopt::buildinfo
