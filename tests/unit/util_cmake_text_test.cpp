#include "util/cmake_text.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("util::cmake_text");

TEST_CASE("a quoted CMake argument escapes backslash, quote, dollar and semicolon") {
  CHECK(kopt::util::cmake_escape("a b") == "a b");
  CHECK(kopt::util::cmake_escape(R"(C:\x "y" ${z};w)") == R"(C:\\x \"y\" \${z}\;w)");
  CHECK(kopt::util::cmake_quote("-DX=1;2") == R"("-DX=1\;2")");
}

TEST_CASE("a quoted list keeps each item one element") {
  CHECK(kopt::util::cmake_quote_list({}) == R"("")");
  CHECK(kopt::util::cmake_quote_list({"00", "01"}) == R"("00;01")");
  CHECK(kopt::util::cmake_quote_list({"/a;b/c.cpp", "/d$e"}) == R"("/a\;b/c.cpp;/d\$e")");
}

TEST_SUITE_END();
