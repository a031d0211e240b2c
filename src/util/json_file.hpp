#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace kopt::util {

/// Parses a JSON file; a syntax error says `file:line:column: <what the parser expected>`.
nlohmann::json read_json(const std::filesystem::path& path);

/// Parses JSON text; `source` names it in errors as read_json does.
nlohmann::json parse_json(const std::string& text, const std::string& source);

/// Serialises `value` deterministically (sorted keys, 2-space indent, trailing newline) and
/// writes it atomically.
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& value);

} // namespace kopt::util
