#include "util/text.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using kopt::util::split_outside_parens;
using Parts = std::vector<std::string>;

TEST_SUITE_BEGIN("util::text");

TEST_CASE("split_outside_parens: separators inside parentheses do not split") {
  CHECK(split_outside_parens("M,fill(64x128,264),M*N", ',') ==
        Parts{"M", "fill(64x128,264)", "M*N"});
  CHECK(split_outside_parens("waves(16x64,8)/waves(64x64,8)", '/') ==
        Parts{"waves(16x64,8)", "waves(64x64,8)"});
  CHECK(split_outside_parens("M/N/K", '/') == Parts{"M", "N", "K"});
  CHECK(split_outside_parens("a,,b,", ',') == Parts{"a", "", "b", ""}); // empty pieces are kept
  CHECK(split_outside_parens("", ',') == Parts{""});
  CHECK(split_outside_parens("f(a,(b,c)),d", ',') == Parts{"f(a,(b,c))", "d"}); // nested
}

TEST_CASE("nearest: case told apart, or not") {
  using kopt::util::Case;
  using kopt::util::nearest;
  Parts columns{"M", "N", "K"};
  CHECK(nearest("k", columns) == "M"); // one edit from each: the first
  CHECK(nearest("k", columns, Case::ignore) == "K");
  CHECK(nearest("batch", {"Batch", "heads"}, Case::ignore) == "Batch");
  CHECK(nearest("zzzzzz", columns, Case::ignore) == "");
}

TEST_SUITE_END();
