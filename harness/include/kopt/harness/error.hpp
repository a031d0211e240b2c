#pragma once

#include <stdexcept>
#include <string>

namespace kopt::harness {

/// The one exception the harness throws: a message naming where the problem is
/// (file:line:field: what was expected). run_main prints it as `harness: error: <what>`.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace kopt::harness
