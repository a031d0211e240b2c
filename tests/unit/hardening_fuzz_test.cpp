// Inputs the fuzz targets (tests/fuzz) found breaking a reader's contract, each kept as a fixture
// in tests/fixtures/hardening/fuzz/: a value or a kopt::Error that names the input and where.
#include "profile/analyze.hpp"
#include "spec/family.hpp"
#include "temp_dir.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

TEST_SUITE_BEGIN("hardening");

TEST_CASE("a configs row without a class column's value names the file and line") {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  fs::path configs = tmp.path() / "tiny" / "configs.csv";
  fs::copy_file(fixture("hardening/fuzz/configs_empty_class_value.csv"), configs,
                fs::copy_options::overwrite_existing);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  CHECK_THROWS_WITH_AS(kopt::profile::representatives(family, kopt::util::read_csv(configs)),
                       (configs.string() +
                        ":4: config class column 'M': expected a number, got ''")
                           .c_str(),
                       kopt::Error);
}

TEST_SUITE_END();
