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

} // namespace

CLI::Validator finite_number(double low, double high) {
  std::string range =
      range_text<double>(low, high, std::numeric_limits<double>::max(), number_text);
  return CLI::Validator(
      [low, high, range](std::string &text) -> std::string {
        char *end = nullptr;
        errno = 0;
        double value = std::strtod(text.c_str(), &end);
        bool whole = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (!whole || !std::isfinite(value) || value < low || value > high) {
          return "expected a finite number " + range + ", got " + text;
        }
        return "";
      },
      "NUMBER " + range);
}

CLI::Validator whole_number(int64_t low, int64_t high) {
  std::string range =
      range_text<int64_t>(low, high, std::numeric_limits<int32_t>::max(), integer_text);
  return CLI::Validator(
      [low, high, range](std::string &text) -> std::string {
        char *end = nullptr;
        errno = 0;
        long long value = std::strtoll(text.c_str(), &end, 10);
        bool whole = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (!whole || value < low || value > high) {
          return "expected a whole number " + range + ", got " + text;
        }
        return "";
      },
      "INT " + range);
}

} // namespace kopt::cli
