#include "decide/identity.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

std::string read(const std::string &name) {
  return kopt::util::read_file(fixture("identity/" + name));
}

bool has(const std::vector<std::string> &argv, const std::string &word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

// Answers ninja, ldd, nm and the compiler from the fixtures in tests/fixtures/identity.
class FakeTools : public kopt::util::ProcessRunner {
public:
  fs::path gen;  ///< the candidate's generated folder
  fs::path view; ///< the baseline's headers folder: the compile that names it gets `baseline_i`
  std::string baseline_i = read("expand_baseline.i");
  std::string candidate_i = read("expand_macro.i");
  std::string baseline_objdump = "0000000000000000 <main>:\n   0:\tcall   5 <main+0x5>\t1: "
                                 "R_X86_64_PLT32\t_ZN4kopt7harness7compareEv-0x4\n";
  std::string candidate_objdump = baseline_objdump;
  std::string instance_objdump = candidate_objdump;
  std::string source = "/src/harness.cpp";
  std::vector<std::vector<std::string>> runs;

  kopt::util::ProcessResult run(const kopt::util::Command &command) override {
    runs.push_back(command.argv);
    kopt::util::ProcessResult result;
    result.exit_code = 0;
    const auto &argv = command.argv;
    if (argv[0] == "ninja" && argv.back() == "candidate_01") {
      result.out = read("link_commands.txt");
    } else if (argv[0] == "ninja") {
      // The compile line of an object of candidate 01, or of the baseline's (00) own.
      std::string dir = argv.back().find("candidate_00") != std::string::npos
                            ? (gen.parent_path() / "00").string()
                            : gen.string();
      result.out = "/k/kopt launch-compile --cwd " + dir + " --base-dir / -- ccache c++ -I" + dir +
                   " -o " + argv.back() + " -c " + source + "\n";
    } else if (argv[0] == "ldd") {
      result.out = read("ldd.txt");
    } else if (argv[0] == "nm" && has(argv, "-u")) {
      result.out = read("nm_instances_undefined.txt");
    } else if (argv[0] == "nm") {
      result.out = has(argv, "-D")                                        ? read("nm_shared.txt")
                   : argv.back().find("/instances/") != std::string::npos ? read("nm_instances.txt")
                                                                          : read("nm_harness.txt");
    } else if (argv[0] == "objdump") {
      // The baseline's compile (under the view), the harness object as built, an instance.
      const std::string &file = argv.back();
      result.out = file.starts_with(view.string())                 ? baseline_objdump
                   : file.find("/instances/") != std::string::npos ? instance_objdump
                                                                   : candidate_objdump;
    } else if (argv[0] == "c++") {
      // The fixtures name the generated folder /b/gen/01: the one the command includes instead.
      std::string dir = argv[2].substr(2);
      result.out = dir == view.string() ? baseline_i : candidate_i;
      for (size_t at = result.out.find("/b/gen/01"); at != std::string::npos;
           at = result.out.find("/b/gen/01", at)) {
        result.out.replace(at, 9, dir);
      }
    }
    return result;
  }
};

struct Scope {
  TempDir tmp;
  kopt::spec::Family family = kopt::spec::load_family(fixture("gen/tiny/family.json"));
  kopt::candidate::CandidateSet candidates = kopt::candidate::CandidateSet::discover(family);
  kopt::spec::Layout layout{tmp.path() / "state"};
  kopt::decide::IdentityScope scope{"01", "00", "candidate_01", "/b"};
  kopt::buildinfo::NinjaDeps deps;
  FakeTools tools;

  Scope() {
    fs::path gen = layout.gen_dir("01");
    tmp.write("state/gen/00/src/tiny_kernel.hpp", "int kernel(int x);\n");
    tmp.write("state/gen/00/src/instance.cpp.in", "");
    tmp.write("state/gen/01/src/tiny_kernel.hpp",
              "int kernel(int x);\nextern \"C\" int clock_gettime(int, void *);\n");
    tmp.write("state/gen/01/src/instance.cpp.in", "");
    tmp.write("state/gen/01/kopt_manifest.h", "#include \"src/tiny_kernel.hpp\"\n");
    deps["CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o"] = {
        (gen / "instances/tiny_1x1.cpp").string(), (gen / "src/tiny_kernel.hpp").string()};
    deps["CMakeFiles/candidate_01.dir/src/harness.cpp.o"] = {
        "/src/harness.cpp", (gen / "src/tiny_kernel.hpp").string()};
    deps["CMakeFiles/candidate_00.dir/src/harness.cpp.o"] = {"/src/harness.cpp"};
    tools.gen = gen;
    tools.view = layout.root / "tmp" / "baseline-headers-01";
  }
};

} // namespace

TEST_SUITE_BEGIN("decide::identity");

TEST_CASE("symbols: each refused symbol named, with the candidate file that spells it") {
  Scope s;
  auto problems =
      kopt::decide::symbol_problems(s.family, s.candidates, s.layout, s.scope, s.deps, s.tools);
  CHECK(problems ==
        std::vector<std::string>{
            "symbol strong() is defined in candidates/01 (object "
            "CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o) and by "
            "harness.cpp.o: a candidate may define only its instances",
            "symbol kopt::harness::poison(float*, unsigned long) is defined in candidates/01 "
            "(object CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o) and by "
            "libkopt_harness.a(inputs.cpp.o): a candidate may define only its instances",
            "symbol std::chrono::_V2::steady_clock::now() is defined in candidates/01 (object "
            "CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o) and by "
            "libstdc++.so.6: a candidate may define only its instances",
            "symbol clock_gettime is defined in candidates/01 (tiny_kernel.hpp, in instance "
            "tiny_1x1's object) and by libc.so.6: a candidate may define only its instances",
            // What an instance may not call: each refused name once, why said.
            "symbol cudaProfilerStop is called from candidates/01 (object "
            "CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o): the timed range "
            "is the harness timer's to start and stop",
            "symbol cuptiActivityDisable is called from candidates/01 (object "
            "CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o): CUPTI is the "
            "tracer's that times the runs",
            "symbol dlsym is called from candidates/01 (object "
            "CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o): a function "
            "looked up at run time would escape this check"});
  // The instance objects, then the harness's objects and archives, then the libraries, then
  // what the instance objects call.
  // What the harness links, then the instance objects, then what they call, then the weak
  // function both the harness object and the instance define (std::min<long>), disassembled.
  REQUIRE(s.tools.runs.size() == 8);
  CHECK(
      s.tools.runs[5] ==
      std::vector<std::string>{
          "nm", "-A", "-u", "/b/CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o"});
  CHECK(s.tools.runs[0] ==
        std::vector<std::string>{"ninja", "-C", "/b", "-t", "commands", "candidate_01"});
  CHECK(s.tools.runs[1][0] == "ldd");
  CHECK(s.tools.runs[6][0] == "objdump");
  CHECK(s.tools.runs[3] == std::vector<std::string>{"nm", "-A", "-g", "--defined-only", "-D",
                                                    "/lib/x86_64-linux-gnu/libstdc++.so.6",
                                                    "/lib/x86_64-linux-gnu/libm.so.6",
                                                    "/lib/x86_64-linux-gnu/libc.so.6",
                                                    "/lib64/ld-linux-x86-64.so.2"});
}

TEST_CASE("symbols: a weak function of an instance with another body than the harness's") {
  Scope s;
  s.tools.baseline_objdump = "0000000000000000 <_ZSt3minIlERKT_S2_S2_>:\n   0:\tmov    "
                             "(%rsi),%rax\n   3:\tret\n";
  s.tools.candidate_objdump = s.tools.baseline_objdump;
  s.tools.instance_objdump = "0000000000000000 <_ZSt3minIlERKT_S2_S2_>:\n   0:\txor    "
                             "%eax,%eax\n   3:\tret\n";
  auto problems =
      kopt::decide::symbol_problems(s.family, s.candidates, s.layout, s.scope, s.deps, s.tools);
  CHECK(std::count(problems.begin(), problems.end(),
                   "symbol long const& std::min<long>(long const&, long const&) is defined in "
                   "candidates/01 (object "
                   "CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o) with another "
                   "body than harness.cpp.o's: the linker keeps one copy for both, so harness code "
                   "could run the candidate's") == 1);
  // The same body passes.
  s.tools.instance_objdump = s.tools.baseline_objdump;
  problems =
      kopt::decide::symbol_problems(s.family, s.candidates, s.layout, s.scope, s.deps, s.tools);
  CHECK(std::none_of(problems.begin(), problems.end(), [](const std::string &p) {
    return p.find("another body") != std::string::npos;
  }));
}

TEST_CASE("expansion: the first harness line a candidate's macro changes") {
  Scope s;
  SUBCASE("a macro is refused, naming the line") {
    auto problems = kopt::decide::expansion_problems(s.family, s.layout, s.scope, s.deps, s.tools);
    CHECK(problems == std::vector<std::string>{
                          "harness.cpp:4 expands differently with candidate 01's tiny_kernel.hpp "
                          "than with the baseline's: a macro of the candidate changes harness "
                          "code"});
    // Only the candidate's harness object read its header: one command, two preprocessings and
    // the compile with the baseline's headers; a macro explains any other difference.
    REQUIRE(s.tools.runs.size() == 4);
    CHECK(s.tools.runs[1] ==
          std::vector<std::string>{"c++", "-E", "-I" + s.tools.gen.string(), "/src/harness.cpp"});
    CHECK(s.tools.runs[2][2] == "-I" + s.tools.view.string());
    CHECK(s.tools.runs[3] == std::vector<std::string>{"c++", "-I" + s.tools.view.string(),
                                                      "/src/harness.cpp", "-c", "-o",
                                                      (s.tools.view / "objects/0.o").string()});
    CHECK(!fs::exists(s.tools.view));
  }
  SUBCASE("the same expansion and the same code pass") {
    s.tools.candidate_i = s.tools.baseline_i;
    CHECK(kopt::decide::expansion_problems(s.family, s.layout, s.scope, s.deps, s.tools).empty());
    // The built harness object and the baseline's compile, disassembled.
    CHECK(std::count_if(s.tools.runs.begin(), s.tools.runs.end(),
                        [](const auto &argv) { return argv[0] == "objdump"; }) == 2);
  }
  SUBCASE("a declaration the harness binds to instead of the library's is refused") {
    s.tools.candidate_i = s.tools.baseline_i;
    s.tools.candidate_objdump = "0000000000000000 <main>:\n   0:\tcall   5 <main+0x5>\t1: "
                                "R_X86_64_PLT32\t_ZN4kopt7harness7compareIiEEvv-0x4\n";
    CHECK(kopt::decide::expansion_problems(s.family, s.layout, s.scope, s.deps, s.tools) ==
          std::vector<std::string>{
              "harness.cpp.o compiles differently with candidate 01's tiny_kernel.hpp than with "
              "the baseline's: main refers to void kopt::harness::compare<int>() instead of "
              "kopt::harness::compare(): a declaration of the candidate changes what harness "
              "code calls"});
  }
  SUBCASE("headers equal to the baseline's are not preprocessed") {
    s.tmp.write("state/gen/01/src/tiny_kernel.hpp", "int kernel(int x);\n");
    CHECK(kopt::decide::expansion_problems(s.family, s.layout, s.scope, s.deps, s.tools).empty());
    CHECK(s.tools.runs.empty());
  }
}

TEST_CASE("expansion: the baseline's own built object, up to date, stands for a compile") {
  Scope s;
  fs::path build = s.tmp.path() / "b";
  fs::path source = s.tmp.write("src/harness.cpp", "int main() {}\n");
  s.tools.source = source.string();
  s.scope.build_dir = build.string();
  s.deps.clear();
  s.deps["CMakeFiles/candidate_01.dir/src/harness.cpp.o"] = {
      source.string(), (s.tools.gen / "src/tiny_kernel.hpp").string()};
  s.deps["CMakeFiles/candidate_00.dir/src/harness.cpp.o"] = {
      source.string(), (s.layout.gen_dir("00") / "src/tiny_kernel.hpp").string()};
  s.tools.candidate_i = s.tools.baseline_i;
  fs::path base_object = s.tmp.write("b/CMakeFiles/candidate_00.dir/src/harness.cpp.o", "obj");
  auto compiles = [&] {
    return std::count_if(s.tools.runs.begin(), s.tools.runs.end(), [](const auto &argv) {
      return argv[0] == "c++" && std::find(argv.begin(), argv.end(), "-c") != argv.end();
    });
  };
  SUBCASE("newer than what it read: disassembled, not compiled again") {
    CHECK(kopt::decide::expansion_problems(s.family, s.layout, s.scope, s.deps, s.tools).empty());
    CHECK(compiles() == 0);
    CHECK(std::count(s.tools.runs.begin(), s.tools.runs.end(),
                     std::vector<std::string>{"objdump", "-d", "-r", "-w", "--no-show-raw-insn",
                                              base_object.string()}) == 1);
  }
  SUBCASE("older than a file it read: compiled with the baseline's headers") {
    fs::last_write_time(base_object, fs::last_write_time(source) - std::chrono::hours(1));
    CHECK(kopt::decide::expansion_problems(s.family, s.layout, s.scope, s.deps, s.tools).empty());
    CHECK(compiles() == 1);
  }
}

TEST_SUITE_END();
