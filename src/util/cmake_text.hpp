#pragma once

// Text for CMake files kopt writes (the generated targets, the import's flags): one escaper.

#include <string>
#include <string_view>
#include <vector>

namespace kopt::util {

/// Returns `text` for the inside of a quoted CMake argument: `\`, `"` and `$` get a backslash,
/// and so does `;`, so that the value stays one element of a list.
std::string cmake_escape(std::string_view text);

/// Returns `text` as one quoted CMake argument ("...", escaped as cmake_escape).
std::string cmake_quote(std::string_view text);

/// Returns `items` as one quoted CMake list argument: each item escaped, joined by `;`.
std::string cmake_quote_list(const std::vector<std::string> &items);

} // namespace kopt::util
