#pragma once

#include <filesystem>
#include <string>

namespace kopt::spec {

/// A parsed candidate.json (see docs/FORMATS.md).
struct CandidateSpec {
  std::string id;
  std::string base; ///< empty for the baseline
  std::string hypothesis;
  std::string target = "global"; ///< "global" or a config class name
  std::string proposal;          ///< repair attempts are counted per proposal; defaults to id
};

/// The most digits a candidate id has: an id names a folder and targets, far below the 255 bytes
/// a file name may have.
inline constexpr size_t max_candidate_id_size = 64;

/// What a candidate id is, for messages: "two to 64 digits".
std::string candidate_id_rule();

/// True for a candidate id as kopt writes it: two digits, or more without a leading zero ("07",
/// "123"; not "7", "011" or "../x"), 64 at most, so one candidate has one id and an id is never
/// a path.
bool is_canonical_candidate_id(const std::string &text);

/// Reads candidate.json; errors name the file and field. The id must equal `folder_name`.
CandidateSpec load_candidate_spec(const std::filesystem::path &file,
                                  const std::string &folder_name);

} // namespace kopt::spec
