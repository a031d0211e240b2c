#pragma once

// A harness run is a candidate's code run: kopt starts it confined (util/confine.hpp), from a
// copy of the executable that it checked against its build, and names what a refused call did.

#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kopt::profile {

/// Confines `command`, a harness run of `family` (or a `profiler` over one): it may write only
/// beneath `writable` (and /dev), keeps its CPU and its scheduling, starts no process, signals
/// and reaches into no other; the harness guards its own read-only memory (KOPT_GUARD=1; not
/// under a profiler, which instruments the process it runs). argv[0] becomes an absolute path.
void confine_harness(util::Command &command, std::vector<std::filesystem::path> writable,
                     const spec::Family &family, bool profiler = false);

/// Copies candidate `id`'s harness to `to` (replacing it) and checks the copy against the file
/// hash its build recorded (buildinfo::built_hash); returns "" or why the program is not the
/// one kopt built, naming both hashes. A build that recorded no hash is copied unchecked, and a
/// copy that differs but carries a kopt hash stamp (another build's harness) is left to the
/// check of the content hash it prints.
std::string verified_copy(const spec::Layout &layout, const std::string &id,
                          const std::filesystem::path &to);

/// What a confined harness was stopped for, from its stderr (`kopt-refused: <call>: <why>`) or
/// its SIGSYS; "" when it was not stopped by a refusal.
std::string refusal(const util::ProcessResult &result);

} // namespace kopt::profile
