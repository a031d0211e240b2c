#pragma once

#include <string>

namespace kopt::harness {

/// This executable's candidate id: its file name without the `candidate_` prefix (the id is not
/// compiled in, so identical candidate folders compile to identical objects).
std::string executable_candidate_id();

/// The content hash of the sources this executable was linked from: kopt_add_family copies the
/// candidate's generated `kopt_hash.txt` to `<executable>.kopt-hash` when it links, so a change
/// of the hash costs a link, never a compile. "" when the file is missing.
std::string executable_candidate_hash();

} // namespace kopt::harness
