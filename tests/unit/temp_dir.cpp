#include "temp_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>

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

std::filesystem::path fixture(const std::string &relative) {
  return std::filesystem::path(KOPT_FIXTURES_DIR) / relative;
}

} // namespace kopt::test
