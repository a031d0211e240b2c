#include "cli/number_options.hpp"

#include <doctest/doctest.h>

#include <optional>

using kopt::cli::finite_number;
using kopt::cli::whole_number;

namespace {

// Parses `args` against one option `--x` checked by `check`; returns the error, "" when parsed.
template <typename T> std::string parse(const CLI::Validator &check, const std::string &args) {
  CLI::App app;
  std::optional<T> value;
  app.add_option("--x", value)->check(check);
  try {
    app.parse(args);
  } catch (const CLI::ParseError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE_BEGIN("cli::number_options");

TEST_CASE("finite_number: nan, inf, text and out of range are refused, naming the range") {
  CHECK(parse<double>(finite_number(0, 1), "--x 0.02") == "");
  CHECK(parse<double>(finite_number(0, 1), "--x 0") == "");
  CHECK(parse<double>(finite_number(0, 1), "--x nan") ==
        "--x: expected a finite number in [0, 1], got nan");
  CHECK(parse<double>(finite_number(0, 1), "--x inf") ==
        "--x: expected a finite number in [0, 1], got inf");
  CHECK(parse<double>(finite_number(0, 1), "--x -5") ==
        "--x: expected a finite number in [0, 1], got -5");
  CHECK(parse<double>(finite_number(0.5, 0.9999), "--x 1") ==
        "--x: expected a finite number in [0.5, 0.9999], got 1");
  CHECK(parse<double>(finite_number(0), "--x -1") == "--x: expected a finite number >= 0, got -1");
  CHECK(parse<double>(finite_number(0), "--x 1e999") ==
        "--x: expected a finite number >= 0, got 1e999");
  CHECK(parse<double>(finite_number(0), "--x 2x") == "--x: expected a finite number >= 0, got 2x");
}

TEST_CASE("whole_number: negatives, fractions and out of range are refused, naming the range") {
  CHECK(parse<int>(whole_number(1), "--x 5") == "");
  CHECK(parse<int>(whole_number(1), "--x -1") == "--x: expected a whole number >= 1, got -1");
  CHECK(parse<int>(whole_number(1), "--x 0") == "--x: expected a whole number >= 1, got 0");
  CHECK(parse<int>(whole_number(2, 1000), "--x 1") ==
        "--x: expected a whole number in [2, 1000], got 1");
  CHECK(parse<int>(whole_number(2, 1000), "--x 2.5") ==
        "--x: expected a whole number in [2, 1000], got 2.5");
  CHECK(parse<int>(whole_number(0), "--x 99999999999") ==
        "--x: expected a whole number >= 0, got 99999999999");
}

TEST_SUITE_END();
