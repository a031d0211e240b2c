#pragma once

#include <string>
#include <string_view>

namespace kopt::harness {

/// Writes `content` to `path` through a temporary file beside it (a unique mkstemp name, so two
/// writers never share one) and a rename, creating the parent folders: a reader never sees a
/// half-written file, and a failure loses nothing that was there before. Throws Error
/// `<path>: cannot <what>: <reason>`. The one atomic writer of the harness and of kopt
/// (kopt::util::write_file_atomic calls it).
void write_file_atomic(const std::string &path, std::string_view content);

/// Writes all of `content` to the open file `fd`, retrying after a signal; throws Error
/// `<path>: cannot write: <reason>`.
void write_all(int fd, std::string_view content, const std::string &path);

} // namespace kopt::harness
