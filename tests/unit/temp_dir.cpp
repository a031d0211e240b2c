#include "temp_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace kopt::test {

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/kopt-unit-XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    throw std::runtime_error("cannot create a temporary folder");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  if (std::getenv("KOPT_KEEP_TEMP")) {
    std::cerr << "kept " << path_ << "\n";
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::write(const std::string &relative,
                                     const std::string &content) const {
  auto file = path_ / relative;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
  return file;
}

size_t nonempty_lines(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    n += line.empty() ? 0 : 1;
  }
  return n;
}

std::filesystem::path fixture(const std::string &relative) {
  return std::filesystem::path(KOPT_FIXTURES_DIR) / relative;
}

} // namespace kopt::test
