#include "gen/instance_template.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>

namespace kopt::gen {

std::string expand_template(const std::string &text,
                            const std::vector<std::pair<std::string, std::string>> &values,
                            const std::string &source) {
  std::string out;
  int line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("{{", pos);
    size_t stop = open == std::string::npos ? text.size() : open;
    line += static_cast<int>(std::count(text.begin() + pos, text.begin() + stop, '\n'));
    out.append(text, pos, stop - pos);
    if (open == std::string::npos) {
      break;
    }
    size_t close = text.find("}}", open + 2);
    size_t newline = text.find('\n', open);
    if (close == std::string::npos || close > newline) {
      throw Error(source + ":" + std::to_string(line) + ": unterminated placeholder '{{'");
    }
    std::string key(util::trim(std::string_view(text).substr(open + 2, close - open - 2)));
    auto it = std::find_if(values.begin(), values.end(),
                           [&](const auto &value) { return value.first == key; });
    if (it == values.end()) {
      std::vector<std::string> known;
      for (const auto &value : values) {
        known.push_back(value.first);
      }
      throw Error(source + ":" + std::to_string(line) + ": unknown placeholder '{{" + key +
                  "}}' (known: " + util::join(known, ", ") + ")");
    }
    out += it->second;
    pos = close + 2;
  }
  return out;
}

} // namespace kopt::gen
