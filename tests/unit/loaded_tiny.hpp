#pragma once

#include "measure/loaded_family.hpp"
#include "temp_dir.hpp"

#include <filesystem>

namespace kopt::test {

/// The tiny host family (tests/fixtures/gen/tiny: 00 and 01, 01 based on 00) copied into
/// `tmp`/tiny and loaded with its state in `tmp`/state: no ledger yet, so BEST is the baseline 00.
inline measure::LoadedFamily loaded_tiny(const TempDir &tmp) {
  std::filesystem::copy(fixture("gen/tiny"), tmp.path() / "tiny",
                        std::filesystem::copy_options::recursive);
  return measure::load((tmp.path() / "tiny" / "family.json").string(),
                       (tmp.path() / "state").string());
}

} // namespace kopt::test
