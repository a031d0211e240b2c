#include "fuzz_target.hpp"

#include "util/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kopt::fuzz {

namespace {

void remove_scratch() {
  std::error_code ec;
  fs::remove_all(scratch(), ec);
}

[[noreturn]] void broken(const std::string &what) {
  std::fprintf(stderr, "kopt fuzz: contract broken: %s\n", what.c_str());
  std::abort();
}

} // namespace

const fs::path &scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("kopt-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::atexit(remove_scratch);
    return d;
  }();
  return dir;
}

void write(const fs::path &path, std::string_view content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) {
    broken("cannot write " + path.string());
  }
}

void copy_fixture(const std::string &relative, const fs::path &to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(fs::path(KOPT_FUZZ_FIXTURES_DIR) / relative, to,
                fs::copy_options::overwrite_existing);
}

std::vector<std::string_view> split_files(std::string_view data) {
  std::vector<std::string_view> files;
  const std::string_view separator = "\n====\n";
  size_t at = 0;
  for (size_t next; (next = data.find(separator, at)) != std::string_view::npos;) {
    files.push_back(data.substr(at, next - at));
    at = next + separator.size();
  }
  files.push_back(data.substr(at));
  return files;
}

void expect_contract(const std::string &input, const std::function<void()> &read) {
  try {
    read();
  } catch (const kopt::Error &e) {
    std::string message = e.what();
    if (message.find(input) == std::string::npos) {
      broken("a kopt::Error that does not name " + input + ": " + message);
    }
  } catch (const std::exception &e) {
    broken(std::string("an exception other than kopt::Error: ") + e.what());
  } catch (...) {
    broken("an exception that is no std::exception");
  }
}

} // namespace kopt::fuzz
