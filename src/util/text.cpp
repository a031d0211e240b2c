#include "util/text.hpp"

#include "util/error.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace kopt::util {

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

std::vector<std::string> split_outside_parens(std::string_view text, char sep) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == sep && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

std::string_view trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) {
    return {};
  }
  size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::string join(const std::vector<std::string> &parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) {
      out += sep;
    }
    out += parts[i];
  }
  return out;
}

namespace {

std::string without_separators(std::string_view text) {
  std::string clean;
  for (char c : trim(text)) {
    if (c != ',') {
      clean += c;
    }
  }
  return clean;
}

} // namespace

bool is_identifier(std::string_view text) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (text.empty() || !alpha(text[0])) {
    return false;
  }
  for (char c : text) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

bool is_digits(std::string_view text) {
  if (text.empty()) {
    return false;
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

bool is_hex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string excerpt(std::string_view text, size_t limit) {
  if (text.size() <= limit) {
    return std::string(text);
  }
  return std::string(text.substr(0, limit)) + "... (" + std::to_string(text.size()) + " bytes)";
}

namespace {

// The length of the UTF-8 sequence at text[at] and its code point; 0 when it is not UTF-8.
size_t utf8_at(std::string_view text, size_t at, char32_t &code) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  size_t size = lead < 0x80           ? 1
                : (lead >> 5) == 0x6  ? 2
                : (lead >> 4) == 0xe  ? 3
                : (lead >> 3) == 0x1e ? 4
                                      : 0;
  if (size == 0 || at + size > text.size()) {
    return 0;
  }
  code = size == 1 ? lead : lead & (0x7f >> size);
  for (size_t i = 1; i < size; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) {
      return 0;
    }
    code = (code << 6) | (byte(at + i) & 0x3f);
  }
  static const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  bool bad = code < smallest[size] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff);
  return bad ? 0 : size;
}

bool hidden(char32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x61c || (c >= 0x200b && c <= 0x200f) ||
         (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff;
}

} // namespace

bool has_hidden_characters(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    char32_t code = 0;
    size_t size = utf8_at(text, at, code);
    if (size == 0 || hidden(code)) {
      return true;
    }
    at += size;
  }
  return false;
}

std::string quote_hidden(std::string_view text) {
  if (!has_hidden_characters(text)) {
    return std::string(text);
  }
  std::string out = "\"";
  char buffer[16];
  for (size_t at = 0; at < text.size();) {
    char32_t code = 0;
    size_t size = utf8_at(text, at, code);
    char c = text[at];
    if (size == 0) {
      std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned char>(c));
      out += buffer;
      ++at;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += std::string("\\") + c;
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
    } else if (hidden(code)) {
      std::snprintf(buffer, sizeof buffer, code < 0x80 ? "\\x%02x" : "\\u%04x",
                    static_cast<unsigned>(code));
      out += buffer;
    } else {
      out += text.substr(at, size);
    }
    at += size;
  }
  return out + "\"";
}

std::string join_capped(const std::vector<std::string> &items, std::string_view sep, size_t limit) {
  if (items.size() <= limit) {
    return join(items, sep);
  }
  std::vector<std::string> first(items.begin(), items.begin() + static_cast<long>(limit));
  return join(first, sep) + std::string(sep) + "and " + std::to_string(items.size() - limit) +
         " more";
}

int64_t parse_int(std::string_view text, const std::string &where) {
  std::string clean = without_separators(text);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (clean.empty() || ec != std::errc() || end != clean.data() + clean.size()) {
    throw Error(where + ": expected an integer, got '" + std::string(text) + "'");
  }
  return value;
}

double parse_double(std::string_view text, const std::string &where) {
  std::string clean = without_separators(text);
  char *end = nullptr;
  double value = std::strtod(clean.c_str(), &end);
  if (clean.empty() || end != clean.c_str() + clean.size()) {
    throw Error(where + ": expected a number, got '" + std::string(text) + "'");
  }
  return value;
}

std::string format_number(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string> &candidates,
                    Case letters) {
  auto folded = [letters](std::string_view text) {
    std::string out(text);
    if (letters == Case::ignore) {
      std::transform(out.begin(), out.end(), out.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
    return out;
  };
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto &candidate : candidates) {
    size_t d = edit_distance(folded(word), folded(candidate));
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

} // namespace kopt::util
