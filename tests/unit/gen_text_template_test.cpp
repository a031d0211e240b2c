#include "gen/text_template.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

#include <string>

using kopt::gen::expand_template;
using kopt::gen::UnusedValues;

TEST_SUITE_BEGIN("gen::text_template");

TEST_CASE("placeholders are replaced by their values, spaces inside the braces ignored") {
  CHECK(expand_template("int {{ symbol }}() { return {{A}}; }\n", {{"symbol", "f"}, {"A", "7"}},
                        "t.in") == "int f() { return 7; }\n");
  CHECK(expand_template("no placeholder\n", {{"A", "7"}}, "t.in") == "no placeholder\n");
}

TEST_CASE("a section is kept when its value is not empty, an inverted one when it is") {
  const std::string text =
      "a\n{{#rows}}\nrows:\n{{rows}}\n{{/rows}}\n{{^rows}}\nnone\n{{/rows}}\nz\n";
  CHECK(expand_template(text, {{"rows", "1\n2"}}, "t.in") == "a\nrows:\n1\n2\nz\n");
  CHECK(expand_template(text, {{"rows", ""}}, "t.in") == "a\nnone\nz\n");
  // A tag inside a line keeps the line; nested sections need every enclosing one kept.
  CHECK(expand_template("x{{#c}}, c={{c}}{{/c}}.\n", {{"c", "1"}}, "t.in") == "x, c=1.\n");
  CHECK(expand_template("x{{#c}}, c={{c}}{{/c}}.\n", {{"c", ""}}, "t.in") == "x.\n");
  CHECK(expand_template("{{#a}}\n{{#b}}\nab\n{{/b}}\n{{/a}}\n", {{"a", ""}, {"b", "1"}}, "t.in") ==
        "");
}

TEST_CASE("template errors name the source, the line and the placeholder") {
  SUBCASE("an unknown placeholder, also in a section that is not kept") {
    CHECK_THROWS_WITH_AS(expand_template("a\n{{#a}}\n{{b}}\n{{/a}}\n", {{"a", ""}}, "t.in"),
                         "t.in:3: unknown placeholder '{{b}}' (known: a)", kopt::Error);
    CHECK_THROWS_WITH_AS(expand_template("{{#x}}{{/x}}\n", {{"a", ""}}, "t.in"),
                         "t.in:1: unknown placeholder '{{#x}}' (known: a)", kopt::Error);
  }
  SUBCASE("a value that fills no placeholder, when every value must be used") {
    CHECK(expand_template("{{a}}\n", {{"a", "1"}, {"b", "2"}}, "t.in") == "1\n");
    CHECK_THROWS_WITH_AS(
        expand_template("{{a}}\n", {{"a", "1"}, {"b", "2"}}, "t.in", UnusedValues::error),
        "t.in: value 'b' fills no placeholder", kopt::Error);
  }
  SUBCASE("an unterminated placeholder") {
    CHECK_THROWS_WITH_AS(expand_template("a\nb {{a\n}}\n", {{"a", "1"}}, "t.in"),
                         "t.in:2: unterminated placeholder '{{'", kopt::Error);
  }
  SUBCASE("unbalanced sections") {
    CHECK_THROWS_WITH_AS(expand_template("a\n{{#a}}\nb\n", {{"a", "1"}}, "t.in"),
                         "t.in:2: section '{{#a}}' is not closed", kopt::Error);
    CHECK_THROWS_WITH_AS(expand_template("a\n{{/a}}\n", {{"a", "1"}}, "t.in"),
                         "t.in:2: '{{/a}}' closes no open section", kopt::Error);
    CHECK_THROWS_WITH_AS(
        expand_template("{{^a}}\n{{#b}}\n{{/a}}\n", {{"a", ""}, {"b", ""}}, "t.in"),
        "t.in:3: '{{/a}}' closes no open section (open: '{{#b}}' of line 2)", kopt::Error);
  }
}

TEST_CASE("kopt's own templates are built in and every value they are given is used") {
  CHECK(kopt::gen::builtin_template("registry.cpp.in").find("{{entries}}") != std::string::npos);
  CHECK_THROWS_WITH_AS(kopt::gen::builtin_template("nope.in"),
                       "templates/nope.in: no such built-in template", kopt::Error);
  CHECK_THROWS_WITH_AS(
      kopt::gen::expand_builtin("instance.cpp.in", {{"body", ""}}),
      "templates/instance.cpp.in:4: unknown placeholder '{{symbol}}' (known: body)", kopt::Error);
}

TEST_SUITE_END();
