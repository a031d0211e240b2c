#pragma once

#include <functional>
#include <map>
#include <string>

namespace kopt::gen {

/// kopt's own templates by file name (templates/*.in), embedded at build time by CMake.
const std::map<std::string, std::string, std::less<>> &builtin_templates();

} // namespace kopt::gen
