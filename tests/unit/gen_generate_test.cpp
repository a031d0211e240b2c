#include "gen/generate.hpp"

#include "buildinfo/hash_stamp.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// The tiny family copied into a temp folder, loaded, with its candidates.
struct Tiny {
  TempDir tmp;
  fs::path dir;
  fs::path out;

  Tiny() : dir(tmp.path() / "tiny"), out(tmp.path() / "gen") {
    fs::copy(fixture("gen/tiny"), dir, fs::copy_options::recursive);
  }

  // Rewrites family.json after `change` edited its JSON.
  void edit(const std::function<void(nlohmann::json &)> &change) const {
    nlohmann::json j = kopt::util::read_json(dir / "family.json");
    change(j);
    std::ofstream(dir / "family.json") << j.dump(2) << "\n";
  }

  kopt::gen::Generated generate(const std::string &id) const {
    auto family = kopt::spec::load_family(dir / "family.json");
    auto set = kopt::candidate::CandidateSet::discover(family);
    return kopt::gen::generate_candidate(family, set, id, out);
  }
};

std::vector<std::string> relative(const std::vector<fs::path> &paths, const fs::path &base) {
  std::vector<std::string> out;
  for (const auto &p : paths) {
    out.push_back(p.lexically_relative(base).generic_string());
  }
  return out;
}

} // namespace

TEST_SUITE_BEGIN("gen::generate");

TEST_CASE("generate writes every file once, then nothing") {
  Tiny tiny;
  auto first = tiny.generate("00");
  fs::path dir = tiny.out / "00";
  CHECK(first.dir == dir);
  CHECK(first.candidate == "00");
  CHECK(first.target == "global");
  CHECK(first.hash.size() == 32);
  CHECK(relative(first.written, dir) ==
        std::vector<std::string>{"instances/tiny_1x1.cpp", "instances/tiny_1x2.cpp",
                                 "instances/tiny_2x1.cpp", "instances/tiny_big.cpp",
                                 "kopt_capture.h", "kopt_dispatch.cpp", "kopt_hash.txt",
                                 "kopt_manifest.h", "kopt_registry.cpp", "manifest.json",
                                 "src/instance.cpp.in", "src/tiny_kernel.hpp"});
  CHECK(first.outputs == first.written);
  CHECK(relative(first.sources, dir) ==
        std::vector<std::string>{"instances/tiny_1x1.cpp", "instances/tiny_1x2.cpp",
                                 "instances/tiny_2x1.cpp", "instances/tiny_big.cpp",
                                 "kopt_registry.cpp", "kopt_dispatch.cpp"});
  CHECK(relative(first.inputs, tiny.dir) ==
        std::vector<std::string>{"family.json", "instance.cpp.in", "tiny_kernel.hpp", "tuned.csv"});
  CHECK(relative(first.configure_inputs, tiny.dir) ==
        std::vector<std::string>{"candidates/00/candidate.json", "configs.csv", "family.json",
                                 "instance.cpp.in", "tuned.csv"});
  // Where each generated copy came from, for the compile launcher's diagnostics.
  nlohmann::json origins = kopt::util::read_json(dir / "manifest.json")["sources"];
  CHECK(origins["src/tiny_kernel.hpp"] ==
        nlohmann::json{{"file", (tiny.dir / "tiny_kernel.hpp").string()}});
  CHECK(origins["instances/tiny_1x1.cpp"] ==
        nlohmann::json{{"file", (tiny.dir / "instance.cpp.in").string()},
                       {"first_line", 2},
                       {"last_line", 5},
                       {"line_offset", -1}});
  CHECK(first.warnings.empty());
  auto stamp = fs::last_write_time(dir / "kopt_dispatch.cpp");

  auto second = tiny.generate("00");
  CHECK(second.written.empty());
  CHECK(second.removed.empty());
  CHECK(second.hash == first.hash);
  CHECK(second.outputs == first.outputs);
  CHECK(fs::last_write_time(dir / "kopt_dispatch.cpp") == stamp);

  SUBCASE("a change in the candidate's header rewrites only what depends on it") {
    tiny.tmp.write("tiny/candidates/01/tiny_kernel.hpp", "#pragma once\n");
    tiny.generate("01");
    tiny.tmp.write("tiny/candidates/01/tiny_kernel.hpp",
                   "#pragma once\ntemplate <int A, int B> int tiny_kernel(int x) { return 0; }\n");
    auto changed = tiny.generate("01");
    CHECK(relative(changed.written, tiny.out / "01") ==
          std::vector<std::string>{"kopt_hash.txt", "manifest.json", "src/tiny_kernel.hpp"});
  }
}

TEST_CASE("compile=dispatch compiles exactly tuned, heuristic and default") {
  Tiny tiny;
  auto g = tiny.generate("00");
  CHECK(g.compiled == std::vector<std::string>{"tiny_1x1", "tiny_1x2", "tiny_2x1", "tiny_big"});
  nlohmann::json manifest = kopt::util::read_json(tiny.out / "00" / "manifest.json");
  CHECK(manifest["compiled"] == nlohmann::json(g.compiled));
  CHECK(manifest["compile"] == "dispatch");
  CHECK(manifest["tuned"] == nlohmann::json({"tiny_2x1"}));
  CHECK(manifest["heuristic"] == nlohmann::json({"tiny_1x2", "tiny_big"}));
  CHECK(manifest["default"] == "tiny_1x1");
  CHECK(manifest["candidate"] == "00");
  CHECK(manifest["hash"] == g.hash);

  SUBCASE("the heuristic set is compiled even without a tuned table") {
    tiny.edit([](nlohmann::json &j) { j.erase("tuned"); });
    CHECK(tiny.generate("00").compiled ==
          std::vector<std::string>{"tiny_1x1", "tiny_1x2", "tiny_big"});
  }
  SUBCASE("compile=all compiles every instance") {
    tiny.edit([](nlohmann::json &j) { j["compile"] = "all"; });
    CHECK(tiny.generate("00").compiled ==
          std::vector<std::string>{"tiny_1x1", "tiny_1x2", "tiny_2x1", "tiny_2x2", "tiny_big"});
    SUBCASE("going back to dispatch removes the stale instance TU") {
      tiny.edit([](nlohmann::json &j) { j["compile"] = "dispatch"; });
      auto back = tiny.generate("00");
      CHECK(relative(back.removed, tiny.out / "00") ==
            std::vector<std::string>{"instances/tiny_2x2.cpp"});
      CHECK_FALSE(fs::exists(tiny.out / "00" / "instances" / "tiny_2x2.cpp"));
    }
  }
}

TEST_CASE("generated text") {
  Tiny tiny;
  auto g = tiny.generate("01");
  fs::path dir = tiny.out / "01";
  std::string dispatch = kopt::util::read_file(dir / "kopt_dispatch.cpp");
  CHECK(dispatch.find("const TunedShape kTuned[] = {\n"
                      "    {16, 64, 128, 2}, // tiny_2x1 (line 3)\n"
                      "    {32, 64, 128, 2}, // tiny_2x1 (line 2)\n"
                      "};\n") != std::string::npos);
  CHECK(dispatch.find("  return kernel_at(0); // tiny_1x1\n") != std::string::npos);
  CHECK(kopt::util::read_file(dir / "instances" / "tiny_1x2.cpp") ==
        "// Generated by kopt gen-instances: do not edit.\n"
        "// Instance tiny_1x2.\n"
        "#include \"../src/tiny_kernel.hpp\"\n"
        "\n"
        "int kopt_instance_tiny_1x2(int x) { return tiny_kernel<1, 2>(x); }\n"
        "\n"
        "#include <type_traits>\n"
        "// The template must define ::kopt_instance_tiny_1x2 with the family's "
        "kernel.signature.\n"
        "static_assert(std::is_same<decltype(::kopt_instance_tiny_1x2), int(int)>::value,\n"
        "              \"kopt: kopt_instance_tiny_1x2 does not have the family's "
        "kernel.signature\");\n");
  CHECK(kopt::util::read_file(dir / "src" / "tiny_kernel.hpp") ==
        kopt::util::read_file(tiny.dir / "candidates" / "01" / "tiny_kernel.hpp"));
  std::string manifest_h = kopt::util::read_file(dir / "kopt_manifest.h");
  CHECK(manifest_h.find("#include \"src/tiny_kernel.hpp\"\n") != std::string::npos);
  CHECK(manifest_h.find("using KernelFn = int(int);\n") != std::string::npos);
  // Neither the id nor the hash is compiled in: a changed hash costs a link, and a copy of this
  // candidate compiles to the same objects.
  CHECK(kopt::util::read_file(dir / "kopt_hash.txt") == g.hash + "\n");
  CHECK(manifest_h.find(g.hash) == std::string::npos);
  CHECK(manifest_h.find("\"01\"") == std::string::npos);
}

TEST_CASE("instance TUs are listed in family.json order, the heaviest first if it says so") {
  Tiny tiny;
  tiny.edit([](nlohmann::json &j) {
    auto &instances = j["instances"];
    std::reverse(instances.begin(), instances.end());
  });
  auto g = tiny.generate("00");
  CHECK(relative(g.sources, tiny.out / "00") ==
        std::vector<std::string>{"instances/tiny_big.cpp", "instances/tiny_2x1.cpp",
                                 "instances/tiny_1x2.cpp", "instances/tiny_1x1.cpp",
                                 "kopt_registry.cpp", "kopt_dispatch.cpp"});
}

TEST_CASE("an instance template override changes that instance's TU only") {
  Tiny tiny;
  auto base = tiny.generate("01");
  fs::path dir = tiny.out / "01";
  std::string other = kopt::util::read_file(dir / "instances" / "tiny_2x1.cpp");
  tiny.tmp.write("tiny/candidates/01/instances/tiny_1x2.in",
                 "#include \"{{header}}\"\n// own variant of {{name}}\n"
                 "int {{symbol}}(int x) { return tiny_kernel<{{A}}, {{B}}>(x) + 0; }\n");
  auto changed = tiny.generate("01");
  CHECK(changed.hash != base.hash);
  CHECK(relative(changed.written, dir) ==
        std::vector<std::string>{"instances/tiny_1x2.cpp", "kopt_hash.txt", "manifest.json"});
  CHECK(kopt::util::read_file(dir / "instances" / "tiny_1x2.cpp")
            .find("// own variant of tiny_1x2") != std::string::npos);
  CHECK(kopt::util::read_file(dir / "instances" / "tiny_2x1.cpp") == other);
  CHECK(std::count(changed.inputs.begin(), changed.inputs.end(),
                   tiny.dir / "candidates" / "01" / "instances" / "tiny_1x2.in") == 1);

  SUBCASE("a file naming no instance is an error naming it") {
    tiny.tmp.write("tiny/candidates/01/instances/tiny_9x9.in", "x\n");
    CHECK_THROWS_WITH_AS(tiny.generate("01"),
                         doctest::Contains("tiny_9x9.in: 'tiny_9x9' is not an instance of family"),
                         kopt::Error);
  }
}

TEST_CASE("generation errors") {
  Tiny tiny;
  SUBCASE("a tuned row naming a kernel that is not an instance") {
    tiny.tmp.write("tiny/tuned.csv",
                   "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
                   "host,1,16,64,128,ck,3,0,5.0,tiny_2x1,1.0,1.0,0.0\n"
                   "host,1,64,64,128,ck,3,0,5.0,tiny_9x9,1.0,1.0,0.0\n");
    CHECK_THROWS_WITH_AS(tiny.generate("00"),
                         ((tiny.dir / "tuned.csv").string() +
                          ":3: kernelName: 'tiny_9x9' is not a compiled instance of family 'tiny'")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("an unknown template placeholder") {
    tiny.tmp.write("tiny/instance.cpp.in", "// {{name}}\n#include \"{{header}}\"\n\n"
                                           "int {{symbol}}(int x) { return {{C}} + x; }\n");
    CHECK_THROWS_WITH_AS(tiny.generate("00"),
                         ((tiny.dir / "instance.cpp.in").string() +
                          ":4: unknown placeholder '{{C}}' (known: name, symbol, header, A, B)")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("an unterminated placeholder") {
    tiny.tmp.write("tiny/instance.cpp.in", "int {{symbol(int x) { return x; }\n");
    CHECK_THROWS_WITH_AS(
        tiny.generate("00"),
        ((tiny.dir / "instance.cpp.in").string() + ":1: unterminated placeholder '{{'").c_str(),
        kopt::Error);
  }
  SUBCASE("duplicate tuned shapes warn") {
    tiny.tmp.write("tiny/tuned.csv",
                   "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
                   "host,1,16,64,128,ck,3,0,5.0,tiny_2x1,1.0,1.0,0.0\n"
                   "host,1,16,64,128,ck,3,0,4.0,tiny_2x2,1.0,1.0,0.0\n");
    auto g = tiny.generate("00");
    CHECK(g.warnings.size() == 1);
    CHECK(g.compiled == std::vector<std::string>{"tiny_1x1", "tiny_1x2", "tiny_2x2", "tiny_big"});
  }
}

TEST_CASE("write_cmake_fragment") {
  Tiny tiny;
  std::vector<kopt::gen::Generated> generated = {tiny.generate("01"), tiny.generate("00")};
  auto family = kopt::spec::load_family(tiny.dir / "family.json");
  fs::path file = tiny.tmp.path() / "targets.cmake";
  kopt::gen::write_cmake_fragment(family, generated, file);
  std::string text = kopt::util::read_file(file);
  auto has = [&](const std::string &line) {
    CAPTURE(line);
    CHECK(text.find("\n" + line + "\n") != std::string::npos);
  };
  has("set(KOPT_tiny_CANDIDATES \"00;01\")");
  has("set(KOPT_tiny_BASELINE \"00\")");
  has("set(KOPT_tiny_BACKEND \"host\")");
  has("set(KOPT_tiny_HARNESS \"" + (tiny.dir / "harness.cpp").string() + "\")");
  has("set(KOPT_tiny_CONFIGS \"" + (tiny.dir / "configs.csv").string() + "\")");
  has("set(KOPT_tiny_TIMEOUT \"300\")");
  has("set(KOPT_tiny_01_DIR \"" + (tiny.out / "01").string() + "\")");
  has("set(KOPT_tiny_01_HASH \"" + generated[0].hash + "\")");
  has("set(KOPT_tiny_01_TARGET \"M<64\")");
  has("set(KOPT_tiny_00_BASE \"\")");
  CHECK(text.find((tiny.dir / "candidates/01/candidate.json").string() + ";") !=
        std::string::npos); // in KOPT_tiny_CONFIGURE_DEPENDS: an edited base re-configures
  std::string sources;
  for (const auto &s : generated[1].sources) {
    sources += (sources.empty() ? "" : ";") + s.string();
  }
  has("set(KOPT_tiny_00_SOURCES \"" + sources + "\")");
  CHECK(text.find("KOPT_tiny_00_DIR") < text.find("KOPT_tiny_01_DIR"));
  auto stamp = fs::last_write_time(file);
  kopt::gen::write_cmake_fragment(family, generated, file);
  CHECK(fs::last_write_time(file) == stamp);
}

TEST_CASE("the generated code compiles, links and dispatches" *
          doctest::skip(kopt::util::find_program("g++").empty())) {
  Tiny tiny;
  auto g = tiny.generate("01");
  // Each path of dispatch: exact tuned, padded M, heuristic, default; 01 computes x*A-B.
  tiny.tmp.write("main.cpp", R"(#include "kopt_manifest.h"
#include <cstdio>
#include <cstring>
static int expect(std::int64_t m, std::int64_t n, std::int64_t k, const char* name, int value) {
  const std::int64_t dims[] = {m, n, k};
  const kopt_generated::KernelEntry& e = kopt_generated::dispatch(dims);
  if (std::strcmp(e.name, name) != 0 || e.fn(3) != value) {
    std::printf("%lld,%lld,%lld: got %s = %d\n", (long long)m, (long long)n, (long long)k,
                e.name, e.fn(3));
    return 1;
  }
  return 0;
}
int main() {
  int bad = expect(16, 64, 128, "tiny_2x1", 5) + expect(20, 64, 128, "tiny_2x1", 5) +
            expect(40, 64, 128, "tiny_1x2", 1) + expect(100, 100, 2000, "tiny_big", 8) +
            expect(100, 100, 500, "tiny_1x1", 2);
  bad += kopt_generated::kernel_count() != 4;
  bad += kopt_generated::find_kernel("tiny_2x2") != nullptr;
  bad += kopt_generated::find_kernel("tiny_big") != &kopt_generated::kernel_at(3);
  std::printf("%s %s\n", kopt_generated::candidate_id(), kopt_generated::candidate_hash());
  return bad;
}
)");
  kopt::util::Command compile;
  // kopt_manifest.h reads the id and hash through the harness library's identity.
  const fs::path harness = KOPT_HARNESS_DIR;
  compile.argv = {"g++",
                  "-std=c++17",
                  "-Wall",
                  "-Wextra",
                  "-pedantic",
                  "-Werror",
                  "-I" + g.dir.string(),
                  "-I" + (harness / "include").string(),
                  (harness / "src" / "identity.cpp").string()};
  for (const auto &source : g.sources) {
    compile.argv.push_back(source.string());
  }
  compile.argv.push_back((tiny.tmp.path() / "main.cpp").string());
  compile.argv.push_back("-o");
  // The harness learns its id from its name, candidate_<id>, as KernelOpt.cmake names it.
  compile.argv.push_back((tiny.tmp.path() / "candidate_01").string());
  compile.timeout_s = 300;
  kopt::util::RealProcessRunner runner;
  auto built = runner.run(compile);
  INFO(built.err);
  REQUIRE(built.ok());
  // Unstamped, the binary knows no hash; kopt stamp-hash (run at link) gives it the candidate's.
  auto ran = runner.run({{(tiny.tmp.path() / "candidate_01").string()}, {}, {}, 60});
  INFO(ran.out);
  CHECK(ran.ok());
  CHECK(ran.out == "01 \n");
  kopt::buildinfo::stamp_hash(tiny.tmp.path() / "candidate_01", g.hash);
  ran = runner.run({{(tiny.tmp.path() / "candidate_01").string()}, {}, {}, 60});
  CHECK(ran.out == "01 " + g.hash + "\n");
}

TEST_SUITE_END();

TEST_CASE("with kernel.types the manifest includes the types header, not the kernel's") {
  Tiny tiny;
  tiny.generate("00");
  std::string manifest = kopt::util::read_file(tiny.out / "00" / "kopt_manifest.h");
  CHECK(manifest.find("#include \"src/tiny_kernel.hpp\"") != std::string::npos);

  std::ofstream(tiny.dir / "tiny_args.hpp") << "#pragma once\n";
  tiny.edit([](nlohmann::json &j) { j["kernel"]["types"] = "tiny_args.hpp"; });
  tiny.generate("00");
  manifest = kopt::util::read_file(tiny.out / "00" / "kopt_manifest.h");
  CHECK(manifest.find("#include \"tiny_args.hpp\"") != std::string::npos);
  CHECK(manifest.find("tiny_kernel.hpp") == std::string::npos);
  // The instances still include the candidate's kernel header.
  for (const auto &entry : fs::directory_iterator(tiny.out / "00" / "instances")) {
    CHECK(kopt::util::read_file(entry.path()).find("../src/tiny_kernel.hpp") != std::string::npos);
  }
}
