#include "spec/fields.hpp"

#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>

namespace kopt::spec {

std::string describe(const nlohmann::json &value) {
  switch (value.type()) {
  case nlohmann::json::value_t::string:
    return "'" + value.get<std::string>() + "'";
  case nlohmann::json::value_t::array:
    return "an array";
  case nlohmann::json::value_t::object:
    return "an object";
  default:
    return util::dump_json(value, -1);
  }
}

void fail_expected(const std::string &where, const std::string &what, const nlohmann::json &value) {
  throw Error(where + ": expected " + what + ", got " + describe(value));
}

Fields::Fields(const nlohmann::json &value, std::string file, std::string path)
    : value_(value), file_(std::move(file)), path_(std::move(path)) {
  if (!value_.is_object()) {
    fail_expected(where(), "an object", value_);
  }
}

void Fields::reject_unknown(const std::vector<std::string> &known) const {
  for (const auto &[key, unused] : value_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) {
      continue;
    }
    std::string hint = util::nearest(key, known);
    throw Error(where(key) + ": unknown field" +
                (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
  }
}

bool Fields::has(const std::string &key) const { return value_.contains(key); }

const nlohmann::json &Fields::required(const std::string &key) const {
  if (!has(key)) {
    throw Error(where(key) + ": missing required field");
  }
  return value_.at(key);
}

std::string Fields::string(const std::string &key) const {
  const auto &v = required(key);
  if (!v.is_string()) {
    fail_expected(where(key), "a string", v);
  }
  return v.get<std::string>();
}

std::string Fields::string_or(const std::string &key, const std::string &fallback) const {
  return has(key) ? string(key) : fallback;
}

std::vector<std::string> Fields::strings(const std::string &key) const {
  const auto &v = required(key);
  if (!v.is_array()) {
    fail_expected(where(key), "an array of strings", v);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      fail_expected(where(key) + "[" + std::to_string(i) + "]", "a string", v[i]);
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

namespace {

// An optional field of type T, `fallback` when absent; `is_t` tells a T, `what` names it.
template <typename T>
T optional_field(const Fields &fields, const std::string &key, T fallback,
                 bool (nlohmann::json::*is_t)() const noexcept, const char *what) {
  if (!fields.has(key)) {
    return fallback;
  }
  const auto &v = fields.required(key);
  if (!(v.*is_t)()) {
    fail_expected(fields.where(key), what, v);
  }
  return v.get<T>();
}

} // namespace

double Fields::number_or(const std::string &key, double fallback) const {
  return optional_field(*this, key, fallback, &nlohmann::json::is_number, "a number");
}

int64_t Fields::integer_or(const std::string &key, int64_t fallback) const {
  if (!has(key)) {
    return fallback;
  }
  const auto &v = value_.at(key);
  if (v.is_number_integer()) {
    return v.get<int64_t>();
  }
  // 1e300 is integral too, but no int64_t: casting it would be undefined behaviour.
  if (double d = v.is_number_float() ? v.get<double>() : 0.5;
      std::floor(d) == d && d >= -0x1p63 && d < 0x1p63) {
    return static_cast<int64_t>(d);
  }
  fail_expected(where(key), "an integer", v);
}

bool Fields::boolean_or(const std::string &key, bool fallback) const {
  return optional_field(*this, key, fallback, &nlohmann::json::is_boolean, "true or false");
}

std::string Fields::path(const std::string &key) const {
  return path_.empty() ? key : path_ + "." + key;
}

std::string Fields::where(const std::string &key) const { return file_ + ": " + path(key); }

std::string Fields::where() const { return path_.empty() ? file_ : file_ + ": " + path_; }

} // namespace kopt::spec
