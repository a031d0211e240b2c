#include "util/csv.hpp"

#include "util/error.hpp"

#include <kopt/harness/config.hpp>
#include <kopt/harness/csv.hpp>
#include <kopt/harness/error.hpp>

#include <doctest/doctest.h>

using kopt::harness::CsvDialect;
using kopt::harness::CsvReader;

namespace {

// Every record of `text` in `dialect`, each with the line it starts on first.
std::vector<std::vector<std::string>> records(const std::string &text, CsvDialect dialect) {
  CsvReader reader(text, "t.csv", dialect);
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> fields;
  int line = 0;
  while (reader.next(fields, line)) {
    fields.insert(fields.begin(), std::to_string(line));
    out.push_back(fields);
  }
  return out;
}

using Rows = std::vector<std::vector<std::string>>;

} // namespace

TEST_SUITE_BEGIN("util");

TEST_CASE("one CSV reader: a table keeps fields as written, a configs file trims and is strict") {
  // Quoted commas, doubled quotes, a quoted line end (the next record starts on line 3) and CRLF.
  std::string text = "a,\"b,\"\"c\"\"\"\r\n\"x\ny\", z \r\n\r\n";
  CHECK(records(text, CsvDialect::table) == Rows{{"1", "a", "b,\"c\""}, {"2", "x\ny", " z "}});
  CHECK(records(text, CsvDialect::configs) == Rows{{"1", "a", "b,\"c\""}, {"2", "x\ny", "z"}});
  // rocprofv3's unescaped quotes inside a quoted kernel name read in a table.
  CHECK(records("\"void f<\"a\">()\",1\n", CsvDialect::table) ==
        Rows{{"1", "void f<\"a\">()", "1"}});
  CHECK_THROWS_WITH_AS(records("\"void f<\"a\">()\",1\n", CsvDialect::configs),
                       "t.csv:1:1: unexpected 'a' after a quoted field", kopt::harness::Error);
  // A line of blanks is blank in a table, a field in a configs file; a lone CR ends a configs line.
  CHECK(records("a\n  \nb\n", CsvDialect::table) == Rows{{"1", "a"}, {"3", "b"}});
  CHECK(records("a\n  \nb\n", CsvDialect::configs) == Rows{{"1", "a"}, {"2", ""}, {"3", "b"}});
  CHECK(records("a\rb\n", CsvDialect::table) == Rows{{"1", "ab"}});
  CHECK(records("a\rb\n", CsvDialect::configs) == Rows{{"1", "a"}, {"2", "b"}});
  // An unclosed quote runs to the end of a table; a configs file names where it opened.
  CHECK(records("a,\"b\nc", CsvDialect::table) == Rows{{"1", "a", "b\nc"}});
  CHECK_THROWS_WITH_AS(records("a,\"b\nc", CsvDialect::configs),
                       "t.csv:1:2: unterminated quoted field", kopt::harness::Error);
}

TEST_CASE("util::parse_csv reads through the shared reader and names the line of a bad row") {
  auto table = kopt::util::parse_csv("\xEF\xBB\xBFM,name\n\n16,\"a\nb\"\n32,c\n", "t.csv");
  CHECK(table.header == std::vector<std::string>{"M", "name"});
  CHECK(table.rows == Rows{{"16", "a\nb"}, {"32", "c"}});
  CHECK(table.lines == std::vector<int>{3, 5});
  CHECK_THROWS_WITH_AS(kopt::util::parse_csv("M,N\n1\n", "t.csv"),
                       "t.csv:2: expected 2 fields as in the header, got 1", kopt::Error);
  CHECK_THROWS_WITH_AS(kopt::util::parse_csv(" \n", "t.csv"),
                       "t.csv: empty file, expected a CSV header line", kopt::Error);
}

TEST_SUITE_END();
