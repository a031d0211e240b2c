// Hostile shapes of an input: invalid UTF-8 under --json,
// nesting 100,000 deep, files without end, and a FIFO or a device where a file should be. Each
// gives a kopt::Error naming the input, never an abort, a crash, a hang or std::bad_alloc.
#include "cli/cli.hpp"
#include "ledger/ledger.hpp"
#include "temp_dir.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"
#include "util/read_file.hpp"

#include <doctest/doctest.h>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace fs = std::filesystem;
using kopt::test::TempDir;

namespace {

// What kopt's CLI printed and returned for `args`.
struct CliRun {
  int rc = 0;
  std::string out;
  std::string err;
};

CliRun run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "kopt");
  std::vector<char *> argv;
  for (std::string &arg : args) {
    argv.push_back(arg.data());
  }
  std::ostringstream out;
  std::ostringstream err;
  std::streambuf *old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf *old_err = std::cerr.rdbuf(err.rdbuf());
  CliRun run;
  run.rc = kopt::cli::main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// The kopt::Error's text of `read` ("" when it returns); any other exception fails the test.
template <typename Read> std::string error_of(Read read) {
  try {
    read();
  } catch (const kopt::Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE_BEGIN("hardening");

TEST_CASE("--json with invalid UTF-8 in the error prints JSON and exits 2, never aborts") {
  TempDir tmp;
  SUBCASE("an unknown option") {
    CliRun run = run_cli({"version", "--json", "--\xffx"});
    CHECK(run.rc == 2);
    nlohmann::json j = kopt::util::parse_json(run.out, "stdout");
    CHECK(j.at("error").get<std::string>().find("--\xef\xbf\xbdx") != std::string::npos);
  }
  SUBCASE("a file name in a kopt::Error") {
    std::filesystem::create_directories(tmp.path() /
                                        "ledger"); // a state folder, so the spec is read
    CliRun run = run_cli({"status", "--json", "--spec", (tmp.path() / "x\xff.json").string(),
                          "--state-dir", tmp.path().string()});
    CHECK(run.rc == 2);
    nlohmann::json j = kopt::util::parse_json(run.out, "stdout");
    CHECK(j.at("error").get<std::string>().find("x\xef\xbf\xbd.json") != std::string::npos);
    CHECK(run.err.find("x\xff.json") != std::string::npos); // the text names it as it is
  }
}

TEST_CASE("JSON nested deeper than the limit is an error at its line and column") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(error_of([&] { kopt::util::parse_json(deep, "deep.json"); }) ==
        "deep.json:1:257: invalid JSON: nested deeper than 256 levels, the most kopt reads");
  SUBCASE("brackets inside strings do not count") {
    std::string text = "{\"a\": \"" + std::string(1000, '[') + "\"}";
    CHECK(kopt::util::parse_json(text, "s.json").at("a").get<std::string>().size() == 1000);
  }
  SUBCASE("attempts.jsonl: the error names the file and the line") {
    TempDir tmp;
    fs::path file = tmp.write("attempts.jsonl", "{\"kind\": \"stop\", \"date\": \"d\", "
                                                "\"reason\": \"r\"}\n" +
                                                    deep + "\n");
    CHECK(error_of([&] { kopt::ledger::read_attempts(file); }) ==
          file.string() +
              ":2:257: invalid JSON: nested deeper than 256 levels, the most kopt reads");
  }
}

TEST_CASE("a file over its kind's size limit is an error naming the file and the limit") {
  TempDir tmp;
  fs::path file = tmp.path() / "state.json";
  tmp.write("state.json", "");
  fs::resize_file(file, (std::size_t{64} << 20) + 1); // sparse: no disk, no time
  CHECK(error_of([&] { kopt::util::read_json(file); }) ==
        file.string() + ": larger than 64 MiB, the most kopt reads from a JSON file");
  CHECK(kopt::util::read_limit(kopt::util::Input::table) == std::size_t{256} << 20);
}

TEST_CASE("a program whose output never ends is stopped at the limit, named in its result") {
  kopt::util::RealProcessRunner runner;
  kopt::util::Command command;
  command.argv = {"sh", "-c", "while :; do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done"};
  command.max_output = std::size_t{1} << 20;
  command.timeout_s = 60;
  kopt::util::ProcessResult result = runner.run(command);
  CHECK(!result.ok());
  CHECK(!result.timed_out);
  CHECK(result.out.size() <= command.max_output);
  CHECK(result.describe(command.timeout_s) ==
        "stopped: its output passed 1 MiB, the most kopt reads from a program");
}

TEST_CASE("only regular files are read: a FIFO, a device, a folder and a dangling link say so") {
  TempDir tmp;
  fs::path fifo = tmp.path() / "state.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of([&] { kopt::util::read_json(fifo); }) ==
        fifo.string() + ": is a FIFO, not a regular file");

  fs::path zero = tmp.path() / "full.csv";
  fs::create_symlink("/dev/zero", zero);
  CHECK(error_of([&] { kopt::util::read_csv(zero); }) ==
        zero.string() + ": is a character device, not a regular file");

  CHECK(error_of([&] { kopt::util::read_file(tmp.path()); }) ==
        tmp.path().string() + ": is a directory, not a regular file");

  fs::path dangling = tmp.path() / "measurement.json";
  fs::create_symlink(tmp.path() / "gone.json", dangling);
  CHECK(error_of([&] { kopt::util::read_json(dangling); }) ==
        dangling.string() + ": is a dangling link to " + (tmp.path() / "gone.json").string());

  fs::path loop = tmp.path() / "loop";
  fs::create_symlink(loop, loop);
  CHECK(error_of([&] { kopt::util::read_file(loop); }) == loop.string() + ": is a link loop");

  CHECK(error_of([&] { kopt::util::read_file(tmp.path() / "missing"); }) ==
        (tmp.path() / "missing").string() + ": cannot read: No such file or directory");

  fs::path attempts = tmp.path() / "attempts.jsonl";
  REQUIRE(::mkfifo(attempts.c_str(), 0600) == 0);
  CHECK(error_of([&] { kopt::ledger::read_attempts(attempts); }) ==
        attempts.string() + ": is a FIFO, not a regular file");
}

TEST_SUITE_END();
