#include "util/json_file.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_text.hpp"

namespace kopt::util {

namespace {

// "line:column" of byte `offset` of `text`, both 1-based.
std::string position(const std::string &text, size_t offset) {
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// Refuses nesting deeper than kMaxJsonDepth before the parser builds it: brackets outside
// strings are counted, which is all the depth a valid document can have.
void check_depth(const std::string &text, const std::string &source) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw Error(source + ":" + position(text, i) + ": invalid JSON: nested deeper than " +
                    std::to_string(kMaxJsonDepth) + " levels, the most kopt reads");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

} // namespace

nlohmann::json parse_json(const std::string &text, const std::string &source) {
  check_depth(text, source);
  try {
    nlohmann::json value = nlohmann::json::parse(text);
    check_json_text(text, source); // what the parser accepts but a file of kopt's never holds
    return value;
  } catch (const nlohmann::json::parse_error &e) {
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error while parsing value - <detail>"; keep the detail only.
    size_t detail = what.find(" - ");
    what = detail == std::string::npos ? what : what.substr(detail + 3);
    throw Error(source + ":" + position(text, offset) + ": invalid JSON: " + what);
  } catch (const nlohmann::json::exception &e) {
    // e.g. out_of_range.406, "number overflow parsing '1e400'": no position, only the text.
    std::string what = e.what();
    size_t detail = what.find("] ");
    throw Error(source + ": invalid JSON: " +
                (detail == std::string::npos ? what : what.substr(detail + 2)));
  }
}

int64_t json_int_in(const nlohmann::json &j, const char *key, int64_t lo, int64_t hi,
                    const std::string &where) {
  auto value = json_field<nlohmann::json>(j, key, where);
  bool fits = false;
  int64_t n = 0;
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    fits = u <= static_cast<uint64_t>(hi);
    n = fits ? static_cast<int64_t>(u) : 0;
  } else if (value.is_number_integer()) {
    n = value.get<int64_t>();
    fits = true;
  }
  if (!fits || n < lo || n > hi) {
    throw Error(where + ": field '" + key + "': expected an integer from " + std::to_string(lo) +
                " to " + std::to_string(hi) + ", got " + dump_json(value, -1));
  }
  return n;
}

int64_t json_int_in_or(const nlohmann::json &j, const char *key, int64_t lo, int64_t hi,
                       int64_t fallback, const std::string &where) {
  if (j.is_object() && !j.contains(key)) {
    return fallback;
  }
  return json_int_in(j, key, lo, hi, where);
}

nlohmann::json json_array(const nlohmann::json &j, const char *key, const std::string &where,
                          bool optional) {
  auto value = optional ? json_field_or<nlohmann::json>(j, key, nlohmann::json::array(), where)
                        : json_field<nlohmann::json>(j, key, where);
  if (!value.is_array()) {
    throw Error(where + ": field '" + key + "' has the wrong type");
  }
  return value;
}

void put_texts(nlohmann::json &j, const TextFields<const std::string> &fields) {
  for (const auto &[key, text] : fields) {
    j[key] = *text;
  }
}

void get_texts(const nlohmann::json &j, const TextFields<std::string> &fields,
               const std::string &where, const std::optional<std::string> &fallback) {
  for (const auto &[key, text] : fields) {
    *text = fallback ? json_field_or<std::string>(j, key, *fallback, where)
                     : json_field<std::string>(j, key, where);
  }
}

std::string dump_json(const nlohmann::json &value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json read_json(const std::filesystem::path &path) {
  return parse_json(read_file(path, Input::json), path.string());
}

void write_json_atomic(const std::filesystem::path &path, const nlohmann::json &value) {
  write_file_atomic(path, dump_json(value) + "\n");
}

} // namespace kopt::util
