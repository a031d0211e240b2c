#pragma once

// The names of an enum's values as one table, read in both directions: kopt writes a value by
// its name and reads the name back with the same table, so the two cannot drift apart.

#include <cstddef>
#include <string_view>
#include <utility>

namespace kopt::util {

/// One value of an enum and its name.
template <typename Enum> using EnumName = std::pair<Enum, const char *>;

/// Returns the name `value` has in `names`, or `fallback` when it has none.
template <typename Enum, std::size_t N>
const char *name_of(const EnumName<Enum> (&names)[N], Enum value, const char *fallback) {
  for (const auto &[known, name] : names) {
    if (known == value) {
      return name;
    }
  }
  return fallback;
}

/// Returns the value named `name` in `names`, or nullptr when none is.
template <typename Enum, std::size_t N>
const Enum *value_named(const EnumName<Enum> (&names)[N], std::string_view name) {
  for (const auto &[value, known] : names) {
    if (known == name) {
      return &value;
    }
  }
  return nullptr;
}

} // namespace kopt::util
