#include "spec/family.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// Copies the tiny family into `tmp` and returns its family.json.
fs::path tiny_family(const TempDir &tmp) {
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  return tmp.path() / "tiny" / "family.json";
}

// Rewrites family.json after `edit` changed its JSON.
void edit(const fs::path &file, const std::function<void(nlohmann::json &)> &change) {
  nlohmann::json j = kopt::util::read_json(file);
  change(j);
  std::ofstream(file) << j.dump(2) << "\n";
}

} // namespace

TEST_SUITE_BEGIN("spec::family");

TEST_CASE("load_family reads the tiny family") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  kopt::spec::Family f = kopt::spec::load_family(file);
  CHECK(f.name == "tiny");
  CHECK(kopt::spec::to_string(f.backend) == "host");
  CHECK(f.impl == "tiny");
  CHECK(f.file == file);
  CHECK(f.dir == file.parent_path());
  CHECK(f.kernel_header == "tiny_kernel.hpp");
  CHECK(f.kernel_signature == "int(int)");
  CHECK(f.kernel_template == "instance.cpp.in");
  REQUIRE(f.instances.size() == 5);
  CHECK(f.instances[0].name == "tiny_1x1");
  CHECK(f.instances[1].name == "tiny_1x2");
  CHECK(f.instances[1].params.at("B") == "2");
  CHECK(f.instances[4].name == "tiny_big");
  CHECK(f.default_kernel == "tiny_1x1");
  CHECK(f.heuristic.kernels() == std::vector<std::string>{"tiny_1x2", "tiny_big"});
  CHECK(f.heuristic_file.empty());
  CHECK(f.tuned == file.parent_path() / "tuned.csv");
  CHECK(f.arch == "host");
  CHECK(f.compile == kopt::spec::Compile::dispatch);
  CHECK(f.dispatch == std::vector<std::string>{"M", "N", "K"});
  CHECK(f.configs == file.parent_path() / "configs.csv");
  CHECK(f.classes.columns == std::vector<std::string>{"M"});
  CHECK(f.classes.buckets.at("M") == std::vector<double>{64, 512});
  CHECK(f.harness == file.parent_path() / "harness.cpp");
  CHECK(f.kernel_regex == ".*");
  CHECK(f.candidates_dir == file.parent_path() / "candidates");
  CHECK(f.timeout_s == 300);
  CHECK(f.warmup == 2);
  CHECK(f.repeat == 15);
  CHECK(f.pin_cpu);

  SUBCASE("find_instance") {
    REQUIRE(f.find_instance("tiny_2x2") != nullptr);
    CHECK(f.find_instance("tiny_2x2")->params.at("A") == "2");
    CHECK(f.find_instance("tiny_3x3") == nullptr);
  }
}

TEST_CASE("optional fields and string parameters") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  edit(file, [](nlohmann::json &j) {
    j["impl"] = "ck";
    j["kernel_regex"] = "tiny_.*";
    j["timeout_s"] = 60;
    j["bench"] = {{"warmup", 0}, {"repeat", 3}, {"pin_cpu", false}};
    j["compile"] = "all";
    j["instances"].push_back({{"A", "int8"}, {"B", 1.5}, {"name", "tiny_mixed"}});
  });
  kopt::spec::Family f = kopt::spec::load_family(file);
  CHECK(f.impl == "ck");
  CHECK(f.kernel_regex == "tiny_.*");
  CHECK(f.timeout_s == 60);
  CHECK(f.warmup == 0);
  CHECK(f.repeat == 3);
  CHECK_FALSE(f.pin_cpu);
  CHECK(f.compile == kopt::spec::Compile::all);
  CHECK(f.instances.back().params.at("A") == "int8");
  CHECK(f.instances.back().params.at("B") == "1.5");
}

TEST_CASE("heuristic rules from a file") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  tmp.write("tiny/heuristic.json", R"({"rules": [{"kernel": "tiny_2x2"}]})");
  edit(file, [](nlohmann::json &j) { j["heuristic"] = "heuristic.json"; });
  kopt::spec::Family f = kopt::spec::load_family(file);
  CHECK(f.heuristic_file == file.parent_path() / "heuristic.json");
  CHECK(f.heuristic.kernels() == std::vector<std::string>{"tiny_2x2"});
}

TEST_CASE("errors name the file and the field") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  std::string at = file.string() + ": ";

  SUBCASE("JSON syntax error with line and column") {
    fs::path bad = fixture("spec/malformed_family.json");
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(bad),
        (bad.string() + ":4:10: invalid JSON: unexpected string literal; expected '}'").c_str(),
        kopt::Error);
  }
  SUBCASE("unknown top-level field with a hint") {
    edit(file, [](nlohmann::json &j) {
      j["kernal"] = j["kernel"];
      j.erase("kernel");
    });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "kernal: unknown field, did you mean 'kernel'?").c_str(),
                         kopt::Error);
  }
  SUBCASE("unknown field without a close match") {
    edit(file, [](nlohmann::json &j) { j["zzzzzzzzzz"] = 1; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file), (at + "zzzzzzzzzz: unknown field").c_str(),
                         kopt::Error);
  }
  SUBCASE("unknown nested field") {
    edit(file, [](nlohmann::json &j) { j["kernel"]["hedaer"] = "x.hpp"; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "kernel.hedaer: unknown field, did you mean 'header'?").c_str(),
                         kopt::Error);
  }
  SUBCASE("unknown instance parameter") {
    edit(file, [](nlohmann::json &j) { j["instances"][2]["AA"] = 3; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "instances[2].AA: unknown field, did you mean 'A'?").c_str(),
                         kopt::Error);
  }
  SUBCASE("missing required field") {
    edit(file, [](nlohmann::json &j) { j.erase("dispatch"); });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "dispatch: missing required field").c_str(), kopt::Error);
  }
  SUBCASE("missing nested required field") {
    edit(file, [](nlohmann::json &j) { j["kernel"].erase("signature"); });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "kernel.signature: missing required field").c_str(), kopt::Error);
  }
  SUBCASE("missing instance parameter") {
    edit(file, [](nlohmann::json &j) { j["instances"][3].erase("B"); });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "instances[3].B: missing required field").c_str(), kopt::Error);
  }
  SUBCASE("parameter of the wrong type") {
    edit(file, [](nlohmann::json &j) { j["instances"][3]["A"] = true; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "instances[3].A: expected a number or string, got true").c_str(),
                         kopt::Error);
  }
  SUBCASE("string field of the wrong type") {
    edit(file, [](nlohmann::json &j) { j["name"] = 7; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "name: expected a string, got 7").c_str(), kopt::Error);
  }
  SUBCASE("bad family name") {
    edit(file, [](nlohmann::json &j) { j["name"] = "Tiny-1"; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "name: expected [a-z][a-z0-9_]*, got 'Tiny-1'").c_str(),
                         kopt::Error);
  }
  SUBCASE("bad backend") {
    edit(file, [](nlohmann::json &j) { j["backend"] = "rocm"; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "backend: expected one of host, cuda, hip, got 'rocm'").c_str(),
                         kopt::Error);
  }
  SUBCASE("duplicate instance names") {
    edit(file, [](nlohmann::json &j) {
      j["instances"][4].erase("name");
      j["instances"][4]["A"] = 2;
      j["instances"][4]["B"] = 1;
    });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "instances[4]: duplicate instance name 'tiny_2x1' (also instances[2])").c_str(),
        kopt::Error);
  }
  SUBCASE("unknown parameter in the name pattern") {
    edit(file, [](nlohmann::json &j) { j["kernel"]["name"] = "tiny_{A}x{C}"; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "instances[0]: unknown parameter '{C}' in name pattern 'tiny_{A}x{C}'").c_str(),
        kopt::Error);
  }
  SUBCASE("default that is not an instance") {
    edit(file, [](nlohmann::json &j) { j["default"] = "tiny_1x3"; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "default: 'tiny_1x3' is not an instance of family 'tiny', did "
                               "you mean 'tiny_1x1'?")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("heuristic kernel that is not an instance") {
    edit(file, [](nlohmann::json &j) { j["heuristic"]["rules"][1]["kernel"] = "huge"; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "heuristic: rules[1].kernel: 'huge' is not an instance of family 'tiny'").c_str(),
        kopt::Error);
  }
  SUBCASE("heuristic feature that is not a dispatch column") {
    edit(file, [](nlohmann::json &j) { j["heuristic"]["rules"][0]["if"][1][0] = "M*NN"; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "heuristic: rules[0].if[1][0]: unknown feature 'NN' (dispatch "
                               "columns: M, N, K), did you mean 'N'?")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("missing heuristic file") {
    edit(file, [](nlohmann::json &j) { j["heuristic"] = "nowhere.json"; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "heuristic: file not found: " + (file.parent_path() / "nowhere.json").string())
            .c_str(),
        kopt::Error);
  }
  SUBCASE("a tuned table needs M, N and K") {
    edit(file, [](nlohmann::json &j) {
      j["dispatch"] = {"M", "N"};
      j["heuristic"]["rules"] = nlohmann::json::array();
    });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "tuned: a tuned table needs dispatch columns M, N and K, got M, N").c_str(),
        kopt::Error);
  }
  SUBCASE("configs lacking a dispatch column") {
    tmp.write("tiny/configs.csv", "M,N\n1,2\n");
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "configs: " + (file.parent_path() / "configs.csv").string() +
                          " lacks dispatch column 'K' (columns: M, N)")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("bad compile mode") {
    edit(file, [](nlohmann::json &j) { j["compile"] = "some"; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "compile: expected one of all, dispatch, got 'some'").c_str(),
                         kopt::Error);
  }
  SUBCASE("bucket edges must increase") {
    edit(file, [](nlohmann::json &j) { j["classes"]["buckets"]["M"] = {64, 32}; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "classes.buckets.M[1]: expected edges in increasing order, got 32 after 64").c_str(),
        kopt::Error);
  }
  SUBCASE("the kernel header must be editable") {
    edit(file, [](nlohmann::json &j) { j["editable"] = {"instance.cpp.in"}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "kernel.header: 'tiny_kernel.hpp' must also be listed in editable "
                               "(generated code includes only the candidate's copies)")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("editable paths stay inside the folder") {
    edit(file, [](nlohmann::json &j) { j["editable"].push_back("../secret.hpp"); });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "editable[2]: expected a relative path inside the family folder, "
                               "got '../secret.hpp'")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("bench.repeat must be positive") {
    edit(file, [](nlohmann::json &j) { j["bench"] = {{"repeat", 0}}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "bench.repeat: expected an integer >= 1, got 0").c_str(),
                         kopt::Error);
  }
  SUBCASE("bench.profiler is cupti or ncu, and only for cuda families") {
    edit(file, [](nlohmann::json &j) { j["bench"] = {{"profiler", "cupti"}}; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "bench.profiler: only cuda families choose their profiler (backend host)").c_str(),
        kopt::Error);
    edit(file, [](nlohmann::json &j) {
      j["backend"] = "cuda";
      j["bench"] = {{"profiler", "nsys"}};
    });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "bench.profiler: expected \"cupti\" or \"ncu\", got 'nsys'").c_str(),
                         kopt::Error);
    edit(file, [](nlohmann::json &j) { j["bench"] = {{"profiler", "ncu"}}; });
    CHECK(kopt::spec::load_family(file).profiler == "ncu");
  }
  SUBCASE("bench.pin_cpu is true or false, and only for host families") {
    edit(file, [](nlohmann::json &j) { j["bench"] = {{"pin_cpu", "yes"}}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "bench.pin_cpu: expected true or false, got 'yes'").c_str(),
                         kopt::Error);
    edit(file, [](nlohmann::json &j) {
      j["backend"] = "cuda";
      j["bench"] = {{"pin_cpu", true}};
    });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "bench.pin_cpu: only host families pin their runs to a CPU (backend cuda)").c_str(),
        kopt::Error);
  }
  SUBCASE("an integral number too large for an integer is an error, not a cast") {
    edit(file, [](nlohmann::json &j) { j["bench"] = {{"warmup", 1e300}}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "bench.warmup: expected an integer, got 1e+300").c_str(),
                         kopt::Error);
  }
  SUBCASE("compile_budget_s must be positive") {
    edit(file, [](nlohmann::json &j) { j["compile_budget_s"] = -5; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "compile_budget_s: expected a positive number of seconds, got -5").c_str(),
        kopt::Error);
  }
  SUBCASE("compile_budget_s is read") {
    edit(file, [](nlohmann::json &j) { j["compile_budget_s"] = 900; });
    CHECK(kopt::spec::load_family(file).compile_budget_s == 900);
  }
}

TEST_CASE("keep.weighting and the application: read, and refused with the field named") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  std::string at = file.string() + ": ";
  fs::path dir = file.parent_path();
  std::ofstream(dir / "app.cpp") << "int main() { return 0; }\n";

  SUBCASE("an application with the default command, and traffic weighting on counted configs") {
    std::ofstream(dir / "counted.csv") << "M,N,K,count\n64,64,64,3\n";
    edit(file, [](nlohmann::json &j) {
      j["app"] = {{"sources", {"app.cpp"}}, {"rounds", 4}};
      j["configs"] = "counted.csv";
      j["keep"] = {{"weighting", "traffic"}};
    });
    kopt::spec::Family f = kopt::spec::load_family(file);
    REQUIRE(f.app);
    CHECK(f.app->sources == std::vector<fs::path>{dir / "app.cpp"});
    CHECK(f.app->command == std::vector<std::string>{"{exe}"});
    CHECK(f.app->rounds == 4);
    CHECK(f.keep_weighting == kopt::spec::KeepWeighting::traffic);
  }
  SUBCASE("traffic weighting without a count column") {
    edit(file, [](nlohmann::json &j) { j["keep"] = {{"weighting", "traffic"}}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         doctest::Contains("keep.weighting: \"traffic\" weighs configs by the "
                                           "configs file's count column"),
                         kopt::Error);
  }
  SUBCASE("an unknown weighting") {
    edit(file, [](nlohmann::json &j) { j["keep"] = {{"weighting", "calls"}}; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "keep.weighting: expected \"equal\", \"count\" or \"traffic\", got 'calls'").c_str(),
        kopt::Error);
  }
  SUBCASE("a command that never runs the candidate's variant") {
    edit(file, [](nlohmann::json &j) {
      j["app"] = {{"sources", {"app.cpp"}}, {"command", {"python3", "serve.py"}}};
    });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         doctest::Contains("app.command: expected a command with {exe}"),
                         kopt::Error);
  }
  SUBCASE("a source outside the family folder, or missing") {
    edit(file, [](nlohmann::json &j) { j["app"] = {{"sources", {"../app.cpp"}}}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "app.sources[0]: expected a relative path inside the family "
                               "folder, got '../app.cpp'")
                             .c_str(),
                         kopt::Error);
    edit(file, [](nlohmann::json &j) { j["app"] = {{"sources", {"gone.cpp"}}}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         doctest::Contains("app.sources[0]: file not found"), kopt::Error);
  }
}

TEST_CASE("a class column listed twice, and a harness outside the family folder") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  std::string at = file.string() + ": ";
  SUBCASE("classes.columns") {
    edit(file, [](nlohmann::json &j) { j["classes"] = {{"columns", {"M", "M"}}}; });
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "classes.columns[1]: column 'M' is listed twice").c_str(),
                         kopt::Error);
  }
  SUBCASE("an absolute harness") {
    edit(file, [](nlohmann::json &j) { j["harness"] = "/etc/passwd"; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "harness: expected a relative path inside the family folder, got '/etc/passwd'")
            .c_str(),
        kopt::Error);
  }
  SUBCASE("a harness that leaves the family folder") {
    tmp.write("harness.cpp", "int main() {}\n");
    edit(file, [](nlohmann::json &j) { j["harness"] = "../harness.cpp"; });
    CHECK_THROWS_WITH_AS(
        kopt::spec::load_family(file),
        (at + "harness: expected a relative path inside the family folder, got '../harness.cpp'")
            .c_str(),
        kopt::Error);
  }
}

TEST_CASE("config values are checked when the family is read, with file:line:column") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  fs::path configs = file.parent_path() / "configs.csv";
  std::string at = configs.string() + ":";
  auto with_rows = [&](const std::string &rows) {
    std::ofstream(configs, std::ios::binary) << "M,N,K\n16,64,128\n" << rows;
  };

  SUBCASE("a NUL byte inside a value") {
    with_rows(std::string("3\0"
                          "2,64,128\n",
                          10));
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "3:1: column 'M': expected no control bytes, got byte 0x00").c_str(),
                         kopt::Error);
  }
  SUBCASE("another control byte") {
    with_rows("32,6\x01"
              "4,128\n");
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "3:2: column 'N': expected no control bytes, got byte 0x01").c_str(),
                         kopt::Error);
  }
  SUBCASE("a dispatch column that is no integer") {
    with_rows("128,abc,128\n");
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "3:2: column 'N': expected an integer, got 'abc'").c_str(),
                         kopt::Error);
    with_rows("128,64,1.5\n");
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "3:3: column 'K': expected an integer, got '1.5'").c_str(),
                         kopt::Error);
  }
  SUBCASE("a config twice, blanks around values as the harness reads them") {
    with_rows("32,64,128\n 16, 64,128\n");
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "4: duplicate config M=16,N=64,K=128 (first on line 2)").c_str(),
                         kopt::Error);
  }
  SUBCASE("a column named twice") {
    std::ofstream(configs) << "M,N,K,N\n16,64,128,1\n";
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (at + "1:4: column name 'N': a duplicate").c_str(), kopt::Error);
  }
  SUBCASE("no configs") {
    std::ofstream(configs) << "M,N,K\n";
    CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                         (configs.string() + ": no configs after the header").c_str(), kopt::Error);
  }
  SUBCASE("blanks and other columns are fine") {
    std::ofstream(configs) << "M,N,K,dtype\n 16 ,64,128,bf16\n-1,64,128,fp8\n";
    CHECK(kopt::spec::load_family(file).configs == configs);
  }
}

TEST_CASE("config_class") {
  kopt::spec::ClassSpec classes{{"M", "K"}, {{"M", {64, 512}}}};
  std::vector<std::string> header = {"M", "N", "K"};
  SUBCASE("bucket labels and plain values") {
    CHECK(kopt::spec::config_class(classes, header, {"16", "64", "128"}) == "M<64,K=128");
    CHECK(kopt::spec::config_class(classes, header, {"64", "64", "128"}) == "64<=M<512,K=128");
    CHECK(kopt::spec::config_class(classes, header, {"511", "64", "256"}) == "64<=M<512,K=256");
    CHECK(kopt::spec::config_class(classes, header, {"512", "64", "256"}) == "M>=512,K=256");
  }
  SUBCASE("three edges") {
    kopt::spec::ClassSpec three{{"M"}, {{"M", {16, 256, 4096}}}};
    CHECK(kopt::spec::config_class(three, header, {"300", "1", "1"}) == "256<=M<4096");
  }
  SUBCASE("a class column missing from the header") {
    CHECK_THROWS_WITH_AS(kopt::spec::config_class(classes, {"M", "N"}, {"1", "2"}),
                         "config class column 'K' is missing (columns: M, N)", kopt::Error);
  }
}

TEST_SUITE_END();

TEST_CASE("kernel.types: the header generated code includes for the signature's types") {
  TempDir tmp;
  fs::path file = tiny_family(tmp);
  fs::path dir = file.parent_path();
  CHECK(kopt::spec::load_family(file).types_include() == "src/tiny_kernel.hpp");

  std::ofstream(dir / "tiny_args.hpp") << "#pragma once\nstruct TinyArgs { int n; };\n";
  edit(file, [](nlohmann::json &j) { j["kernel"]["types"] = "tiny_args.hpp"; });
  kopt::spec::Family f = kopt::spec::load_family(file);
  CHECK(f.kernel_types == "tiny_args.hpp");
  CHECK(f.types_include() == "tiny_args.hpp"); // the family's own, found through its folder

  edit(file, [](nlohmann::json &j) { j["editable"].push_back("tiny_args.hpp"); });
  CHECK(kopt::spec::load_family(file).types_include() == "src/tiny_args.hpp"); // the candidate's

  edit(file, [](nlohmann::json &j) { j["kernel"]["types"] = "missing_args.hpp"; });
  CHECK_THROWS_WITH_AS(kopt::spec::load_family(file),
                       doctest::Contains("kernel.types: 'missing_args.hpp' is no file in"),
                       kopt::Error);
}
