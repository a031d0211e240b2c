#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace kopt::util {

/// What a file read whole holds, which sets the most bytes kopt reads from it: a link to
/// /dev/zero or a runaway log ends with an error naming the file and the limit, not with
/// std::bad_alloc.
enum class Input {
  json,   ///< JSON documents (state.json, measurement.json, family.json, replies): 64 MiB
  table,  ///< CSV tables (configs, full.csv, tuned and aiter tables, captures): 256 MiB
  text,   ///< logs, patches, profiler output, attempts.jsonl, .ninja_log, sources: 256 MiB
  binary, ///< harness binaries and libraries read for their content hash: 4 GiB
};

/// Returns the most bytes read_file reads from an input of `kind`.
std::size_t read_limit(Input kind);

/// Returns "" when `path`, links followed, is a regular file; else what it is instead, to
/// follow the path in an error: "is a FIFO, not a regular file" (also a character or block
/// device, a socket, a directory), "is a dangling link to <target>", "is a link loop", or
/// "cannot read: <reason>" ("No such file or directory" when nothing is there).
std::string why_not_regular(const std::filesystem::path &path);

/// Reads a whole regular file of at most read_limit(kind) bytes. Anything else throws
/// kopt::Error naming the path and what it is (see why_not_regular) or the limit; a FIFO is
/// never opened in a way that could block.
std::string read_file(const std::filesystem::path &path, Input kind = Input::text);

/// Formats a byte count for messages: "64 MiB", "512 KiB", "100 bytes".
std::string format_bytes(std::size_t bytes);

} // namespace kopt::util
