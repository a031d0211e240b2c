#pragma once

// The hash stamp (`kopt stamp-hash`): the candidate's content hash written into its linked
// harness, so that no TU holds it and a changed hash costs a re-link, not a compile.

#include <filesystem>
#include <string>
#include <string_view>

namespace kopt::buildinfo {

/// The marker that opens the hash slot of the harness library (harness/src/identity.cpp): the
/// slot is this marker, then the candidate's 32 hex digits and a NUL, in the linked executable's
/// data. Both sides must agree; a unit test checks that they do.
inline constexpr std::string_view kHashSlotMarker = "@kopt-hash-slot@";

/// Writes `hash` (32 lowercase hex digits) into the hash slot of the linked executable `binary`,
/// in place (33 bytes; nothing else of the file changes), so that the executable carries the
/// candidate's content hash while no TU depends on it: a new hash costs a link, not a compile.
/// Throws Error naming the file when the hash is malformed or the slot is missing or not unique.
void stamp_hash(const std::filesystem::path &binary, const std::string &hash);

/// Returns the hash in `binary`'s slot ("" when none was stamped); throws Error as stamp_hash.
std::string stamped_hash(const std::filesystem::path &binary);

/// The file beside a candidate's kopt_hash.txt (its gen folder) that holds the file hash
/// (util::hash_file) of its harness executable as the build made it, stamped.
inline constexpr std::string_view kBuiltHashFile = "harness_file_hash.txt";

/// Writes `binary`'s file hash into kBuiltHashFile in `gen_dir` (atomically): what kopt checks
/// the program it runs against, so that a harness changed after its build is never run.
void record_built_hash(const std::filesystem::path &binary, const std::filesystem::path &gen_dir);

/// Returns the file hash recorded for the harness of `gen_dir`, "" when none was recorded.
std::string built_hash(const std::filesystem::path &gen_dir);

} // namespace kopt::buildinfo
