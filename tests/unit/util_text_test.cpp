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

TEST_CASE("quote_hidden: controls, bidi and invisible characters escaped, other text as is") {
  using kopt::util::has_hidden_characters;
  using kopt::util::quote_hidden;
  CHECK(quote_hidden("src/caf\xc3\xa9 k.hpp") == "src/caf\xc3\xa9 k.hpp");
  CHECK_FALSE(has_hidden_characters("a\\b\"c"));
  CHECK(quote_hidden("a\nb") == "\"a\\nb\"");
  CHECK(quote_hidden("x\tq\"\\\x7f") == "\"x\\tq\\\"\\\\\\x7f\"");
  CHECK(quote_hidden("evil\xe2\x80\xaeppa.hpp") == "\"evil\\u202eppa.hpp\""); // U+202E
  CHECK(quote_hidden("a\xe2\x81\xa6"
                     "b\xe2\x80\x8b"
                     "c\xef\xbb\xbf") == "\"a\\u2066b\\u200bc\\ufeff\"");
  CHECK(quote_hidden("c1\xc2\x85") == "\"c1\\u0085\"");
  CHECK(quote_hidden("bad\xff\xc3") == "\"bad\\xff\\xc3\""); // not UTF-8
  CHECK(has_hidden_characters("\xd8\x9c"));                  // U+061C
  CHECK_FALSE(has_hidden_characters("\xe2\x80\x94"));        // an em dash shows as itself
}

TEST_CASE("join_capped: ten items, then how many more") {
  std::vector<std::string> items;
  for (int i = 0; i < 5000; ++i) {
    items.push_back("f" + std::to_string(i));
  }
  CHECK(kopt::util::join_capped(items, ", ") ==
        "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, and 4990 more");
  CHECK(kopt::util::join_capped({"a", "b"}, "; ") == "a; b");
  items.resize(10);
  CHECK(kopt::util::join_capped(items, ", ").ends_with("f8, f9"));
}

TEST_SUITE_END();
