#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "util/read_file.hpp" // read_file, which the writers here use too

namespace kopt::util {

/// Writes `content` to `path` through a temporary file beside it and a rename, so a reader
/// never sees a half-written file and a failure loses nothing that was there before: the
/// harness's writer (harness::write_file_atomic), which kopt shares.
void write_file_atomic(const std::filesystem::path &path, std::string_view content);

/// Writes `content` atomically only when the file is missing or differs; returns whether it
/// wrote. An unchanged file keeps its mtime, so ninja sees no work.
bool write_file_if_changed(const std::filesystem::path &path, std::string_view content);

/// Appends one line (a newline is added) to `path` and flushes it to disk before returning. When
/// the file's last line has no newline (a write cut short), the line starts on a new one, so the
/// cut line stays as it is and this one stays whole.
void append_line(const std::filesystem::path &path, std::string_view line);

/// Removes `path` (nothing when it is absent); a write step like the two above, so that the fault
/// injection below can stop or fail it. Throws kopt::Error naming the path when it cannot.
void remove_file(const std::filesystem::path &path);

/// Removes folder `path` with everything in it (nothing when it is absent); a write step like
/// remove_file. Throws kopt::Error naming the path when it cannot.
void remove_tree(const std::filesystem::path &path);

/// Test-only fault injection into the write steps above (for tests/e2e/ledger_faults.sh and
/// land_faults.sh), read once from KOPT_FAULT_INJECT: `count` prints `kopt: write step <n>:
/// <step> <path>` to stderr at each step; `<n>:fail` fails the n-th step with ENOSPC before it
/// writes anything; `<n>:torn` leaves the n-th step half done (a temp file not renamed, half a
/// line appended, a file not removed, a folder's first entry removed) and `<n>:kill` completes
/// it, both then ending the process at once with status 137, as a SIGKILL there would. Unset or
/// unparsable: no injection.
inline constexpr const char *kFaultInjectEnv = "KOPT_FAULT_INJECT";

} // namespace kopt::util
