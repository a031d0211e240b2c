#include "temp_dir.hpp"

#include <kopt/harness/atomic_file.hpp>
#include <kopt/harness/config.hpp>
#include <kopt/harness/error.hpp>
#include <kopt/harness/run.hpp>

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using kopt::test::TempDir;

namespace {

std::string read(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

TEST_SUITE_BEGIN("harness::atomic_file");

TEST_CASE("the atomic writer replaces the file, creates folders and leaves no temp file") {
  TempDir tmp;
  fs::path file = tmp.path() / "a" / "b" / "results.csv";
  kopt::harness::write_file_atomic(file.string(), "first\n");
  CHECK(read(file) == "first\n");
  kopt::harness::write_file_atomic(file.string(), "second\n");
  CHECK(read(file) == "second\n");
  int entries = 0;
  for (const auto &entry : fs::directory_iterator(file.parent_path())) {
    (void)entry;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("the atomic writer's errors name the file") {
  TempDir tmp;
  fs::path blocker = tmp.write("blocker", "a file, not a folder");
  fs::path file = blocker / "results.csv";
  CHECK_THROWS_AS(kopt::harness::write_file_atomic(file.string(), "x"), fs::filesystem_error);
  fs::path dir = tmp.path() / "dir";
  fs::create_directories(dir / "results.csv");
  REQUIRE_THROWS_AS(kopt::harness::write_file_atomic((dir / "results.csv").string(), "x"),
                    kopt::harness::Error);
  try {
    kopt::harness::write_file_atomic((dir / "results.csv").string(), "x");
  } catch (const kopt::harness::Error &e) {
    CHECK(std::string(e.what()).rfind((dir / "results.csv").string() + ": cannot rename into place",
                                      0) == 0);
  }
}

TEST_CASE("one config label and one set of result columns") {
  CHECK(kopt::harness::config_label({"M", "N", "K"}, {"64", "128", "256"}) == "M=64,N=128,K=256");
  CHECK(kopt::harness::config_label({"M"}, {"64", "x"}) == "M=64,x");
  kopt::harness::ResultColumns columns = kopt::harness::result_columns("gemm");
  CHECK(columns.kernel == "kernel");
  CHECK(columns.us == "us_gemm");
  CHECK(columns.err == "err_gemm");
  CHECK(columns.samples == "samples_gemm");
}

TEST_SUITE_END();
