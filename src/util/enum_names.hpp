#pragma once

// The names of an enum's values as one table, read in both directions: kopt writes a value by
// its name and reads the name back with the same table, so the two cannot drift apart. A table
// is an array (built-in or std::array) of EnumName.

#include "util/error.hpp"

#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

namespace kopt::util {

/// One value of an enum and its name in kopt's files.
template <typename E> struct EnumName {
  E value;
  const char *name;
};

/// The enum of a table of EnumName.
template <typename Names>
using EnumOf = std::remove_cv_t<decltype(std::begin(std::declval<const Names &>())->value)>;

/// Returns the name `value` has in `names`, or `fallback` when it has none.
template <typename Names>
const char *name_of(const Names &names, EnumOf<Names> value, const char *fallback = "?") {
  for (const auto &n : names) {
    if (n.value == value) {
      return n.name;
    }
  }
  return fallback;
}

/// Returns the value named `name` in `names`, or nullptr when none is.
template <typename Names>
const EnumOf<Names> *value_named(const Names &names, std::string_view name) {
  for (const auto &n : names) {
    if (n.name == name) {
      return &n.value;
    }
  }
  return nullptr;
}

/// Returns the value named `text`; throws `<where>: expected one of a, b, c, got '<text>'` (an
/// empty name is listed as "").
template <typename Names>
EnumOf<Names> parse_name(const Names &names, const std::string &text, const std::string &where) {
  if (const EnumOf<Names> *value = value_named(names, text)) {
    return *value;
  }
  std::string all;
  for (const auto &n : names) {
    all += (all.empty() ? "" : ", ") + std::string(*n.name ? n.name : "\"\"");
  }
  throw Error(where + ": expected one of " + all + ", got '" + text + "'");
}

} // namespace kopt::util
