#include "cli/number_options.hpp"

#include "util/text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace kopt::cli {

namespace {

// ">= 0" when only a floor is meant, else "in [0.5, 0.9999]".
template <typename T> std::string range_text(T low, T high, T none, std::string (*text)(T)) {
  return high == none ? ">= " + text(low) : "in [" + text(low) + ", " + text(high) + "]";
}

std::string number_text(double value) { return util::format_number(value); }
std::string integer_text(int64_t value) { return std::to_string(value); }

// Accepts the whole of a text `parse` (strtod, strtoll) reads as a finite value in [low, high];
// else says it expected `what` in `range`. `type` names the value in the help ("NUMBER").
template <typename T, typename Parse>
CLI::Validator in_range(T low, T high, const std::string &range, const std::string &what,
                        const std::string &type, Parse parse) {
  return CLI::Validator(
      [low, high, range, what, parse](std::string &text) -> std::string {
        char *end = nullptr;
        errno = 0;
        auto value = parse(text.c_str(), &end);
        bool whole = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (!whole || !std::isfinite(static_cast<double>(value)) || value < low || value > high) {
          return "expected " + what + " " + range + ", got " + text;
        }
        return "";
      },
      type + " " + range);
}

} // namespace

CLI::Validator finite_number(double low, double high) {
  return in_range(low, high,
                  range_text<double>(low, high, std::numeric_limits<double>::max(), number_text),
                  "a finite number", "NUMBER",
                  [](const char *text, char **end) { return std::strtod(text, end); });
}

CLI::Validator whole_number(int64_t low, int64_t high) {
  return in_range(low, high,
                  range_text<int64_t>(low, high, std::numeric_limits<int32_t>::max(), integer_text),
                  "a whole number", "INT",
                  [](const char *text, char **end) { return std::strtoll(text, end, 10); });
}

} // namespace kopt::cli
