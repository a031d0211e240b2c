#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/error.hpp"

#include <nlohmann/json.hpp>

namespace kopt::util {

/// Returns j[key] as an integer in [lo, hi]; outside it (or not an integer) throws
/// `<where>: field '<key>': expected an integer from lo to hi, got <value>`. For counts and
/// counters, which a plain get<int> would wrap silently (2^63 - 1 read as -1).
int64_t json_int_in(const nlohmann::json &j, const char *key, int64_t lo, int64_t hi,
                    const std::string &where);

/// As json_int_in, or `fallback` when j has no such key.
int64_t json_int_in_or(const nlohmann::json &j, const char *key, int64_t lo, int64_t hi,
                       int64_t fallback, const std::string &where);

/// Returns j[key] as a T; throws `<where>: missing field '<key>'` or `<where>: field '<key>' has
/// the wrong type`, so readers of kopt's own JSON files name what is wrong. An integer T is read
/// as json_int_in over T's range: nlohmann's get<int> would cast 1e300 (undefined behaviour).
template <typename T>
T json_field(const nlohmann::json &j, const char *key, const std::string &where) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    static_assert(sizeof(T) < sizeof(int64_t) || std::is_signed_v<T>, "no uint64 fields");
    return static_cast<T>(
        json_int_in(j, key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), where));
  } else {
    if (!j.is_object() || !j.contains(key)) {
      throw Error(where + ": missing field '" + key + "'");
    }
    try {
      return j.at(key).get<T>();
    } catch (const nlohmann::json::exception &) {
      throw Error(where + ": field '" + key + "' has the wrong type");
    }
  }
}

/// Returns j[key] as a T, or `fallback` when j has no such key (fields added in later versions
/// of a file); a present field of the wrong type throws as json_field does.
template <typename T>
T json_field_or(const nlohmann::json &j, const char *key, T fallback, const std::string &where) {
  if (j.is_object() && !j.contains(key)) {
    return fallback;
  }
  return json_field<T>(j, key, where);
}

/// Returns j[key] as an array; throws `<where>: missing field '<key>'` or `<where>: field '<key>'
/// has the wrong type`. With `optional`, an absent key is an empty array.
nlohmann::json json_array(const nlohmann::json &j, const char *key, const std::string &where,
                          bool optional = false);

/// Reads each item of array j[key] (json_array's checks) as read(item, "<where>: <key>[<i>]").
template <typename Read>
auto json_items(const nlohmann::json &j, const char *key, const std::string &where, Read read,
                bool optional = false) {
  nlohmann::json items = json_array(j, key, where, optional);
  std::vector<decltype(read(items, where))> out;
  for (size_t i = 0; i < items.size(); ++i) {
    out.push_back(read(items[i], where + ": " + key + "[" + std::to_string(i) + "]"));
  }
  return out;
}

/// A record's string fields by name (`{"date", &row.date}, ...`), so that one list serves the
/// writer and the reader of its file; `Text` is `const std::string` for a writer.
template <typename Text> using TextFields = std::vector<std::pair<const char *, Text *>>;

/// The text type of a record's fields: const for a const record.
template <typename Record>
using TextOf = std::conditional_t<std::is_const_v<Record>, const std::string, std::string>;

/// Sets j[name] to each field's text.
void put_texts(nlohmann::json &j, const TextFields<const std::string> &fields);

/// Reads each field as json_field<std::string> does (`<where>: missing field '<key>'`), or, with
/// `fallback` given, as json_field_or does (fields added in later versions of a file).
void get_texts(const nlohmann::json &j, const TextFields<std::string> &fields,
               const std::string &where, const std::optional<std::string> &fallback = {});

/// The deepest nesting of arrays and objects the JSON readers accept: kopt's own files nest a few
/// levels, and a deeper document would overflow the stack of the code that walks it.
inline constexpr int kMaxJsonDepth = 256;

/// Parses a JSON file (read_file's checks, Input::json's size limit); a syntax error says
/// `file:line:column: <what the parser expected>`.
nlohmann::json read_json(const std::filesystem::path &path);

/// Parses JSON text; `source` names it in errors as read_json does. Nesting deeper than
/// kMaxJsonDepth is an error at the line and column where it goes too deep.
nlohmann::json parse_json(const std::string &text, const std::string &source);

/// Serialises `value` with `indent` (nlohmann's dump), invalid UTF-8 in a string replaced by
/// U+FFFD instead of thrown: paths and names read from other tools' files are not always UTF-8.
std::string dump_json(const nlohmann::json &value, int indent = 2);

/// Serialises `value` deterministically (sorted keys, 2-space indent, trailing newline) and
/// writes it atomically.
void write_json_atomic(const std::filesystem::path &path, const nlohmann::json &value);

} // namespace kopt::util
