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

} // namespace kopt::util
