#pragma once
// An enum's names in one table: the text a file or an answer writes for each value, and the
// error that names where an unknown one was read.

#include "util/error.hpp"

#include <array>
#include <cstddef>
#include <string>

namespace kopt::util {

/// One value of an enum and its name in kopt's files.
template <typename E> struct EnumName {
  E value;
  const char *name;
};

/// Returns the name of `value` in `names`, "?" for a value the table lacks.
template <typename E, std::size_t N>
const char *name_of(const std::array<EnumName<E>, N> &names, E value) {
  for (const EnumName<E> &n : names) {
    if (n.value == value) {
      return n.name;
    }
  }
  return "?";
}

/// Returns the value named `text`; throws `<where>: expected one of a, b, c, got '<text>'` (an
/// empty name is listed as "").
template <typename E, std::size_t N>
E parse_name(const std::array<EnumName<E>, N> &names, const std::string &text,
             const std::string &where) {
  std::string all;
  for (const EnumName<E> &n : names) {
    if (text == n.name) {
      return n.value;
    }
    all += (all.empty() ? "" : ", ") + std::string(*n.name ? n.name : "\"\"");
  }
  throw Error(where + ": expected one of " + all + ", got '" + text + "'");
}

} // namespace kopt::util
