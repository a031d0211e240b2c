#pragma once

#include <stdexcept>
#include <string>

namespace kopt {

/// The one exception kopt throws: a message for the user that names where the problem is
/// (file:line: field: what was expected). `main` catches it and prints `kopt: error: <what>`.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace kopt
