#include "util/error.hpp"
#include "util/json_file.hpp"

#include <doctest/doctest.h>

#include <string>

using kopt::util::parse_json;

TEST_SUITE_BEGIN("util::json_text");

TEST_CASE("a key twice in one object is refused, naming the key and its line") {
  REQUIRE_THROWS_WITH_AS(parse_json("{\n  \"id\": \"01\",\n  \"id\": \"02\"\n}\n", "c.json"),
                         "c.json:3:3: invalid JSON: duplicate key 'id' in one object", kopt::Error);
  // Spelled differently, the same key.
  REQUIRE_THROWS_WITH_AS(parse_json(R"({"a": {"x": 1, "\u0078": 2}})", "c.json"),
                         "c.json:1:16: invalid JSON: duplicate key 'x' in one object", kopt::Error);
  // The same key in sibling or nested objects, and strings that look like keys, are fine.
  CHECK(parse_json(R"({"a": {"x": 1}, "b": {"x": [{"x": 2}, "x", {"x": ":"}]}})", "c.json")
            .at("b")
            .at("x")
            .size() == 3);
  CHECK(parse_json("[{\"k\"\n : 1}, {\"k\": 2}]", "c.json").size() == 2);
}

TEST_CASE("a NUL byte after the JSON value is refused, not read as its end") {
  REQUIRE_THROWS_WITH_AS(parse_json(std::string("{\"a\": 1}\n\0", 10), "s.json"),
                         "s.json:2:1: invalid JSON: a NUL byte after the JSON value", kopt::Error);
  CHECK_THROWS_AS(parse_json(std::string("{\"a\": 1}\0{\"a\": 2}", 17), "s.json"), kopt::Error);
}

TEST_SUITE_END();
