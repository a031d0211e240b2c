#include "temp_dir.hpp"

#include <kopt/harness/config.hpp>
#include <kopt/harness/error.hpp>

#include <doctest/doctest.h>

using kopt::harness::parse_configs;

TEST_SUITE_BEGIN("harness::config");

TEST_CASE("configs parse with quotes, blanks and CRLF") {
  auto configs =
      parse_configs("M,N,name\r\n16, 256 ,\"a,\"\"b\"\"\"\r\n\r\n64,512,plain\r\n", "configs.csv");
  REQUIRE(configs.size() == 2);
  CHECK(configs[0].get_int("M") == 16);
  CHECK(configs[0].get_int("N") == 256);
  CHECK(configs[0].str("name") == "a,\"b\"");
  CHECK(configs[0].line() == 2);
  CHECK(configs[1].line() == 4);
  CHECK(configs[1].index() == 1);
  CHECK(configs[1].get_double("N") == 512.0);
  CHECK(configs[1].key() == "M=64,N=512,name=plain");
  CHECK(configs[1].where() == "configs.csv:4");
}

TEST_CASE("config errors name file:line:field") {
  SUBCASE("not an integer") {
    auto configs = parse_configs("M,N\n16,12x\n", "c.csv");
    REQUIRE_THROWS_WITH(configs[0].get_int("N"),
                        "c.csv:2:2: column 'N': expected an integer, got '12x'");
  }
  SUBCASE("a NUL byte inside an integer is no integer (strtoll stopped at it)") {
    auto configs = parse_configs(std::string("M,N\n16,3\0"
                                             "2\n",
                                             11),
                                 "c.csv");
    CHECK_THROWS_AS(configs[0].get_int("N"), kopt::harness::Error);
    CHECK_THROWS_AS(configs[0].get_double("N"), kopt::harness::Error);
  }
  SUBCASE("not a number") {
    auto configs = parse_configs("M,N\n16,\n", "c.csv");
    REQUIRE_THROWS_WITH(configs[0].get_double("N"),
                        "c.csv:2:2: column 'N': expected a number, got ''");
  }
  SUBCASE("missing column") {
    auto configs = parse_configs("M,N\n16,1\n", "c.csv");
    REQUIRE_THROWS_WITH(configs[0].get_int("K"), "c.csv:2: no column 'K' (columns: M,N)");
  }
  SUBCASE("wrong field count") {
    REQUIRE_THROWS_WITH(parse_configs("M,N\n1,2\n3\n", "c.csv"),
                        "c.csv:3: expected 2 fields, got 1");
  }
  SUBCASE("unterminated quote") {
    REQUIRE_THROWS_WITH(parse_configs("M,N\n1,\"2\n", "c.csv"),
                        "c.csv:2:2: unterminated quoted field");
  }
  SUBCASE("text after a quoted field") {
    REQUIRE_THROWS_WITH(parse_configs("M,N\n1,\"2\"x\n", "c.csv"),
                        "c.csv:2:2: unexpected 'x' after a quoted field");
  }
  SUBCASE("duplicate column") {
    REQUIRE_THROWS_WITH(parse_configs("M,N,M\n1,2,3\n", "c.csv"),
                        "c.csv:1:3: duplicate column 'M'");
  }
  SUBCASE("duplicate config") {
    REQUIRE_THROWS_WITH(parse_configs("M,N\n1,2\n3,4\n1, 2\n", "c.csv"),
                        "c.csv:4: duplicate config M=1,N=2 (first on line 2)");
  }
  SUBCASE("no configs") {
    REQUIRE_THROWS_WITH(parse_configs("M,N\n\n", "c.csv"), "c.csv: no configs after the header");
  }
  SUBCASE("empty file") {
    REQUIRE_THROWS_WITH(parse_configs("", "c.csv"), "c.csv: empty file, expected a header row");
  }
}

TEST_CASE("read_configs names a missing file") {
  kopt::test::TempDir dir;
  auto file = dir.write("configs.csv", "M\n7\n");
  CHECK(kopt::harness::read_configs(file.string()).at(0).get_int("M") == 7);
  std::string missing = (dir.path() / "none.csv").string();
  REQUIRE_THROWS_WITH(kopt::harness::read_configs(missing),
                      (missing + ": cannot open the configs file").c_str());
}

TEST_SUITE_END();
