#include "profile/freshness.hpp"

#include "ledger/ledger.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <fstream>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

TEST_SUITE_BEGIN("profile::freshness");

TEST_CASE("a measurement is stale once what it measured changed") {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  kopt::spec::Layout layout(tmp.path() / "state");
  kopt::profile::Measurement m;
  m.candidate = "01";
  m.configs.resize(3); // configs.csv's three rows
  kopt::profile::set_inputs(m, kopt::profile::current_inputs(family, layout));
  CHECK(m.configs_hash.size() == 32);
  CHECK(m.golden.empty());
  CHECK(kopt::profile::changed_since(m, family, layout) == "");

  SUBCASE("a row added to the configs file") {
    std::ofstream(family.configs, std::ios::app) << "64,64,128\n";
    CHECK(kopt::profile::changed_since(m, family, layout) ==
          "configs.csv changed since the measurement (3 configs measured, 4 now)");
  }
  SUBCASE("the harness source edited") {
    std::ofstream(family.harness, std::ios::app) << "// edited\n";
    CHECK(kopt::profile::changed_since(m, family, layout) ==
          "the harness source harness.cpp changed since the measurement");
  }
  SUBCASE("a golden made, then remade") {
    tmp.write("state/golden/golden.bin", "kopt-golden 1\n");
    tmp.write("state/golden/golden.json", R"({"date": "1"})");
    CHECK(kopt::profile::changed_since(m, family, layout) ==
          "a golden was made since the measurement (its outputs were not compared)");
    kopt::profile::set_inputs(m, kopt::profile::current_inputs(family, layout));
    CHECK(kopt::profile::changed_since(m, family, layout) == "");
    tmp.write("state/golden/golden.json", R"({"date": "2"})");
    CHECK(kopt::profile::changed_since(m, family, layout) ==
          "the golden was remade since the measurement");
  }
  SUBCASE("a measurement by an older kopt records none of them: nothing to compare") {
    m.configs_hash.clear();
    m.golden.clear();
    m.harness_source.clear();
    std::ofstream(family.configs, std::ios::app) << "64,64,128\n";
    CHECK(kopt::profile::changed_since(m, family, layout) == "");
  }
}

TEST_CASE("other_build: a measurement of another build than BEST's row") {
  kopt::ledger::State state;
  state.best = "00";
  kopt::ledger::KeptRow row;
  row.candidate = "00";
  row.build = "aaaaaaaaaaaa";
  row.build_flags = "c++ -O3 -std=c++17";
  state.kept.push_back(row);
  kopt::profile::Measurement m;
  m.candidate = "01";
  m.build = "bbbbbbbbbbbb";
  m.build_flags = "c++ -g -std=c++17";
  CHECK(kopt::ledger::recorded_build(state).optimisation == "-O3");
  CHECK(kopt::ledger::other_build(state, m) ==
        "candidate 01 measured build bbbbbbbbbbbb (-O0 (no -O)); BEST 00 was recorded with build "
        "aaaaaaaaaaaa (-O3)");
  m.build = row.build;
  CHECK(kopt::ledger::other_build(state, m) == "");
  m.build.clear(); // a build kopt's launcher did not record: unknown, not other
  CHECK(kopt::ledger::other_build(state, m) == "");

  SUBCASE("a row written before kept rows had build fields: read from its measured_by") {
    state.kept.back().build.clear();
    state.kept.back().measured_by = "chrono on Some CPU, build cccccccccccc (-O2)";
    CHECK(kopt::ledger::recorded_build(state).hash == "cccccccccccc");
    CHECK(kopt::ledger::recorded_build(state).optimisation == "-O2");
    m.build = "bbbbbbbbbbbb";
    CHECK(kopt::ledger::other_build(state, m) ==
          "candidate 01 measured build bbbbbbbbbbbb (-O0 (no -O)); BEST 00 was recorded with "
          "build cccccccccccc (-O2)");
  }
}

TEST_SUITE_END();
