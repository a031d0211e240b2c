#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kopt::candidate {

/// One file's section of a patch (`git diff`, `git diff --binary`, `git format-patch` or
/// `diff -u` output): its paths as the patch writes them, without the a/ b/ prefixes.
struct PatchFile {
  std::string old_path; ///< "" for a created file (/dev/null)
  std::string new_path; ///< "" for a deleted file (/dev/null)
  int line = 0;         ///< the patch line where the section starts
  bool binary = false;  ///< "GIT binary patch" or "Binary files ... differ"
  bool renamed = false; ///< "rename from/to"
  bool copied = false;  ///< "copy from/to" (git diff -C)
  std::string new_mode; ///< "new file mode" or "new mode" (e.g. "120000": a symlink)
  std::string hunks;    ///< the text hunks, from the first "@@" line, verbatim

  /// The path the section is about: the new path, or the old one for a deletion.
  const std::string &path() const { return new_path.empty() ? old_path : new_path; }
};

/// Splits a patch into its file sections. Text before the first section (a commit message) and
/// after a section's last hunk (a format-patch signature) is skipped. Errors name
/// `source:line` and what was expected (`patch.diff:12: hunk header: expected '@@ -a,b +c,d @@'`).
std::vector<PatchFile> parse_patch(std::string_view text, const std::string &source);

/// Returns a `git apply` patch of `file`'s text hunks with its path replaced by `path`.
std::string rewrite_patch(const PatchFile &file, const std::string &path);

} // namespace kopt::candidate
