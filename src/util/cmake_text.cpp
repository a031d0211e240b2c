#include "util/cmake_text.hpp"

namespace kopt::util {

std::string cmake_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"' || c == '$' || c == ';') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string cmake_quote(std::string_view text) { return "\"" + cmake_escape(text) + "\""; }

std::string cmake_quote_list(const std::vector<std::string> &items) {
  std::string out = "\"";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i ? ";" : "") + cmake_escape(items[i]);
  }
  return out + "\"";
}

} // namespace kopt::util
