#pragma once

#include <string>
#include <string_view>

namespace kopt::util {

/// Throws kopt::Error for what nlohmann's parser lets through in JSON text it accepted: a NUL
/// byte (the parser stops there, so whatever follows is never read) and an object holding a key
/// twice (the parser keeps the last). Errors say `source:line:column: ...` and name the key.
void check_json_text(std::string_view text, const std::string &source);

} // namespace kopt::util
