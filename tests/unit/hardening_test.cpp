// Inputs that crashed or hung kopt's readers (an outside mutation pass found them): each must give
// a value or a kopt::Error that names the input, never another exception, a crash or a hang.
#include "buildinfo/build_report.hpp"
#include "heuristic/fit.hpp"
#include "heuristic/results.hpp"
#include "profile/measurement.hpp"
#include "spec/family.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <functional>
#include <string>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// The tiny family with one change to its family.json; returns the file.
fs::path tiny_with(const TempDir &tmp, const std::function<void(nlohmann::json &)> &change) {
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  fs::path file = tmp.path() / "tiny" / "family.json";
  nlohmann::json j = kopt::util::read_json(file);
  change(j);
  std::ofstream(file) << j.dump(2) << "\n";
  return file;
}

// The kopt::Error the family load throws ("" when it loads); any other exception fails the test.
std::string load_error(const fs::path &file) {
  try {
    kopt::spec::load_family(file);
  } catch (const kopt::Error &e) {
    return e.what();
  }
  return "";
}

const std::string kHuge(100000, 'x'); // 10 KB gave a clean error, 100 KB overflowed the stack

} // namespace

TEST_SUITE_BEGIN("hardening");

TEST_CASE("a number too large for a double is invalid JSON that names the file") {
  fs::path file = fixture("hardening/number_overflow.json");
  CHECK_THROWS_WITH_AS(kopt::util::read_json(file),
                       (file.string() + ": invalid JSON: number overflow parsing '1e400'").c_str(),
                       kopt::Error);
}

TEST_CASE("100 KB names in family.json are errors, not stack overflows") {
  TempDir tmp;
  SUBCASE("name") {
    fs::path file = tiny_with(tmp, [](nlohmann::json &j) { j["name"] = kHuge; });
    CHECK(load_error(file) == file.string() +
                                  ": name: expected at most 200 characters (it names folders and "
                                  "targets), got 100000");
  }
  SUBCASE("a parameter") {
    fs::path file = tiny_with(tmp, [](nlohmann::json &j) { j["parameters"][0] = kHuge + "-"; });
    CHECK(load_error(file).find(": expected an identifier other than name, symbol and header, "
                                "got 'xxxx") != std::string::npos);
    CHECK(load_error(file).find("... (100001 bytes)'") != std::string::npos);
  }
  SUBCASE("kernel.name, which names every instance") {
    fs::path file = tiny_with(tmp, [](nlohmann::json &j) { j["kernel"]["name"] = kHuge; });
    CHECK(load_error(file).find("is longer than 200 characters (it names a file)") !=
          std::string::npos);
  }
  SUBCASE("kernel_regex") {
    fs::path file = tiny_with(tmp, [](nlohmann::json &j) { j["kernel_regex"] = kHuge; });
    CHECK(load_error(file) == file.string() +
                                  ": kernel_regex: expected a regex of at most 1000 characters, "
                                  "got 100000");
  }
}

TEST_CASE("a path component over 255 bytes is a file not found") {
  TempDir tmp;
  fs::path file =
      tiny_with(tmp, [](nlohmann::json &j) { j["harness"] = std::string(300, 'a') + "/h.cpp"; });
  CHECK(load_error(file).find(": harness: file not found: ") != std::string::npos);
}

TEST_CASE("a shape column of -2^63 is refused, not fitted (the fit ran away on it)") {
  fs::path file = fixture("hardening/full_k_int64_min.csv");
  CHECK_THROWS_WITH_AS(kopt::heuristic::read_results(file),
                       (file.string() + ":2: K: expected an integer from 0 to 2147483647, got "
                                        "'-9223372036854775808'")
                           .c_str(),
                       kopt::Error);
}

TEST_CASE("CSV: a UTF-8 byte order mark and CRLF line ends") {
  auto t = kopt::util::parse_csv("\xEF\xBB\xBFM,N\r\n1,2\r\n", "t.csv");
  CHECK(t.header == std::vector<std::string>{"M", "N"});
  CHECK(t.column("M") == 0);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0] == std::vector<std::string>{"1", "2"});
}

TEST_CASE(".ninja_log: a 100 KB output path and invalid UTF-8") {
  std::string log = "# ninja log v5\n"
                    "0\t100\t0\tCMakeFiles/candidate_01.dir/kopt/fam/gen/01/instances/a.cpp.o\t1a\n"
                    "0\t200\t0\t" +
                    kHuge + "/candidate_02.dir/x.cpp.o\t2b\n" +
                    "0\t300\t0\tCMakeFiles/candidate_01.dir/\xff\xfe.cpp.o\t3c\n";
  auto report = kopt::buildinfo::make_report(
      kopt::buildinfo::parse_ninja_log(log, "L"), 1,
      [](const std::string &) { return kopt::buildinfo::CacheResult::unknown; });
  CHECK(report.tus.size() == 3);
  std::string json = kopt::util::dump_json(kopt::buildinfo::to_json(report));
  CHECK(json.find("\xEF\xBF\xBD") != std::string::npos); // U+FFFD for the invalid bytes
  CHECK(json.find("\"instance\": \"a\"") != std::string::npos);
}

TEST_CASE("identifiers, digits and excerpts without std::regex") {
  using kopt::util::excerpt;
  using kopt::util::is_digits;
  using kopt::util::is_identifier;
  CHECK(is_identifier("_a1"));
  CHECK(is_identifier(kHuge));
  CHECK_FALSE(is_identifier("1a"));
  CHECK_FALSE(is_identifier(""));
  CHECK_FALSE(is_identifier("a-b"));
  CHECK(is_digits("007"));
  CHECK_FALSE(is_digits(""));
  CHECK_FALSE(is_digits("1a"));
  CHECK(excerpt("short") == "short");
  CHECK(excerpt(kHuge, 4) == "xxxx... (100000 bytes)");
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("hardening");

TEST_CASE("appending after a line cut short keeps the new line whole") {
  TempDir tmp;
  fs::path file = tmp.path() / "attempts.jsonl";
  std::ofstream(file) << "{\"a\": 1}\n{\"b\": ";
  kopt::util::append_line(file, "{\"c\": 3}");
  CHECK(kopt::util::read_file(file) == "{\"a\": 1}\n{\"b\": \n{\"c\": 3}\n");
  kopt::util::append_line(file, "{\"d\": 4}");
  CHECK(kopt::util::read_file(file) == "{\"a\": 1}\n{\"b\": \n{\"c\": 3}\n{\"d\": 4}\n");
}

TEST_CASE("counters and counts are range-checked where they are read") {
  using kopt::util::json_int_in;
  nlohmann::json j = nlohmann::json::parse(
      R"({"big": 9223372036854775807, "neg": -3, "ok": 4, "text": "4", "real": 1.5})");
  CHECK(json_int_in(j, "ok", 0, 10, "s.json") == 4);
  CHECK_THROWS_WITH_AS(json_int_in(j, "big", 0, 1000000, "s.json"),
                       "s.json: field 'big': expected an integer from 0 to 1000000, got "
                       "9223372036854775807",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(json_int_in(j, "neg", 0, 10, "s.json"),
                       "s.json: field 'neg': expected an integer from 0 to 10, got -3",
                       kopt::Error);
  CHECK_THROWS_AS(json_int_in(j, "text", 0, 10, "s.json"), kopt::Error);
  CHECK_THROWS_AS(json_int_in(j, "real", 0, 10, "s.json"), kopt::Error);
  CHECK(kopt::util::json_int_in_or(j, "absent", 0, 10, 7, "s.json") == 7);
}

TEST_CASE("measurement.json with configs of the wrong type is an error naming it") {
  TempDir tmp;
  fs::path file = tmp.path() / "measurement.json";
  std::ofstream(file) << R"({"family": "f", "candidate": "01", "hash": "h", "status": "ok",
    "reason": "", "measured_by": "ncu", "profiled": true, "device": "d", "date": "x",
    "config_columns": ["M"], "configs": "1"})";
  CHECK_THROWS_WITH_AS(
      kopt::profile::read_measurement(file),
      (file.string() + ": field 'configs': expected an array of config results, got \"1\"").c_str(),
      kopt::Error);
}

TEST_SUITE_END();
