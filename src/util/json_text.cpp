#include "util/json_text.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <nlohmann/json.hpp>
#include <set>
#include <vector>

namespace kopt::util {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The end of the string literal that opens at `open` (its closing quote's index).
size_t literal_end(std::string_view text, size_t open) {
  size_t i = open + 1;
  while (i < text.size() && text[i] != '"') {
    i += text[i] == '\\' ? 2 : 1;
  }
  return i;
}

} // namespace

void check_json_text(std::string_view text, const std::string &source) {
  // One entry per open container, innermost last: the keys an object has shown so far, or
  // nothing for an array. No recursion, so nesting of any depth costs no stack.
  std::vector<std::set<std::string>> keys;
  std::vector<bool> is_object;
  int line = 1;
  size_t line_start = 0;
  auto where = [&](size_t at) {
    return source + ":" + std::to_string(line) + ":" + std::to_string(at - line_start + 1);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\0') {
      throw Error(where(i) + ": invalid JSON: a NUL byte after the JSON value");
    }
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (c == '{' || c == '[') {
      is_object.push_back(c == '{');
      keys.emplace_back();
    } else if ((c == '}' || c == ']') && !is_object.empty()) {
      is_object.pop_back();
      keys.pop_back();
    } else if (c == '"') {
      size_t close = literal_end(text, i);
      size_t next = close + 1;
      while (next < text.size() && is_blank(text[next])) {
        ++next;
      }
      bool key = next < text.size() && text[next] == ':' && !is_object.empty() && is_object.back();
      if (key && close < text.size()) {
        std::string_view literal = text.substr(i, close - i + 1);
        std::string name = literal.find('\\') == std::string_view::npos
                               ? std::string(literal.substr(1, literal.size() - 2))
                               : nlohmann::json::parse(literal).get<std::string>();
        if (!keys.back().insert(name).second) {
          throw Error(where(i) + ": invalid JSON: duplicate key '" + excerpt(name) +
                      "' in one object");
        }
      }
      i = close;
    }
  }
}

} // namespace kopt::util
