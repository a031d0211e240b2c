#pragma once

#include <string>

namespace kopt::harness {

/// This executable's candidate id: its file name without the `candidate_` prefix (the id is not
/// compiled in, so identical candidate folders compile to identical objects).
std::string executable_candidate_id();

/// The content hash of the sources this executable was built from. No TU holds it (a changed
/// hash would cost a compile): `kopt stamp-hash`, which kopt_add_family runs when the executable
/// links, writes it into a slot of this library's data. "" when the slot was never stamped.
std::string executable_candidate_hash();

} // namespace kopt::harness
