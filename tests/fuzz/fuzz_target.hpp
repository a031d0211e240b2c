#pragma once
// What every fuzz target checks of a reader: it returns a value, or throws a kopt::Error whose
// message names the input (a file under scratch() or the label it was given). Any other
// exception, or an error that names nothing, aborts the process: libFuzzer records it as a crash.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::fuzz {

/// This process's own folder for readers that take paths (made on first use, emptied at exit).
const std::filesystem::path &scratch();

/// Writes `content` to `path` (creating its folder), replacing what was there.
void write(const std::filesystem::path &path, std::string_view content);

/// Copies a file of tests/fixtures (`relative` to it) to `to`.
void copy_fixture(const std::string &relative, const std::filesystem::path &to);

/// Splits a multi-file input at lines of "====" (the layout the multi-file seeds use).
std::vector<std::string_view> split_files(std::string_view data);

/// Runs `read`; a kopt::Error must name `input` (a path or label), anything else aborts.
void expect_contract(const std::string &input, const std::function<void()> &read);

/// The input as text.
inline std::string_view text_of(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

} // namespace kopt::fuzz
