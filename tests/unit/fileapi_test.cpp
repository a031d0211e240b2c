#include "fileapi/import.hpp"
#include "fileapi/reply.hpp"
#include "temp_dir.hpp"

#include <chrono>
#include <doctest/doctest.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fa = kopt::fileapi;
using kopt::test::TempDir;
using nlohmann::json;

TEST_SUITE_BEGIN("fileapi");

namespace {

// A reply as cmake writes it for a tree with one shared library `kernels` (a CXX and a CUDA
// group) in folder k/, codemodel 2.<minor>; `extra` fields stand for what newer cmakes add.
struct FakeTree {
  TempDir dir;
  std::string build() const { return (dir.path() / "b").string(); }
  std::string reply() const { return "b/.cmake/api/v1/reply/"; }

  void write(int minor, bool extra, const std::vector<std::string> &configs = {"Release"}) {
    dir.write("b/CMakeCache.txt", "CMAKE_BUILD_TYPE:STRING=Release\n");
    json targets_by_config = json::array();
    json configurations = json::array();
    for (const auto &config : configs) {
      std::string target_file = "target-kernels-" + config + ".json";
      std::string prefix = configs.size() > 1 ? config + "/" : "";
      json cxx = {
          {"language", "CXX"},
          {"compileCommandFragments",
           {{{"fragment", "-O3 -DNDEBUG -fPIC"}}, {{"fragment", "-std=gnu++20"}}}},
          {"defines", {{{"define", "FOO=1"}}, {{"define", "BAR=\"x y\""}}}},
          {"includes", {{{"path", "/src/k/inc"}}, {{"path", "/opt/sys"}, {"isSystem", true}}}},
          {"sourceIndexes", {0, 2}}};
      json cuda = {{"language", "CUDA"},
                   {"compileCommandFragments",
                    {{{"fragment", "--generate-code=arch=compute_90,code=[compute_90,sm_90]"}}}},
                   {"sourceIndexes", {1}}};
      if (minor >= 2) {
        cxx["languageStandard"] = {{"standard", "20"}};
        cuda["languageStandard"] = {{"standard", "17"}};
      }
      json target = {
          {"name", "kernels"},
          {"id", "kernels::@1"},
          {"type", "SHARED_LIBRARY"},
          {"paths", {{"source", "k"}, {"build", "k"}}},
          {"compileGroups", {cxx, cuda}},
          {"sources",
           {{{"path", "k/a.cpp"}, {"compileGroupIndex", 0}},
            {{"path", "k/b.cu"}, {"compileGroupIndex", 1}},
            {{"path", build() + "/k/gen.cpp"}, {"compileGroupIndex", 0}, {"isGenerated", true}},
            {{"path", "k/a.hpp"}}}},
          {"artifacts", {{{"path", "k/" + prefix + "libkernels.so"}}}},
          {"dependencies", {{{"id", "gen::@1"}}}}};
      if (extra) {
        target["fileSets"] = json::array();
        target["futureField"] = {{"anything", 1}};
        target["compileGroups"][0]["frameworks"] = json::array();
      }
      dir.write(reply() + target_file, target.dump());
      json config_json = {
          {"name", config},
          {"directories",
           {{{"source", "."}, {"build", "."}, {"childIndexes", {1}}},
            {{"source", "k"}, {"build", "k"}, {"parentIndex", 0}, {"targetIndexes", {0}}}}},
          {"targets", {{{"name", "kernels"}, {"id", "kernels::@1"}, {"jsonFile", target_file}}}}};
      if (extra) {
        config_json["abstractTargets"] = json::array();
      }
      configurations.push_back(config_json);
    }
    json codemodel = {{"kind", "codemodel"},
                      {"version", {{"major", 2}, {"minor", minor}}},
                      {"paths", {{"source", "/src"}, {"build", build()}}},
                      {"configurations", configurations}};
    dir.write(reply() + "codemodel-v2.json", codemodel.dump());
    dir.write(reply() + "toolchains-v1.json",
              json{{"toolchains",
                    {{{"language", "CXX"}, {"compiler", {{"path", "/usr/bin/c++"}, {"id", "GNU"}}}},
                     {{"language", "CUDA"}, {"compiler", {{"path", "/usr/local/cuda/bin/nvcc"}}}}}}}
                  .dump());
    json cache_entries = {{{"name", "CMAKE_BUILD_TYPE"}, {"value", "Release"}}};
    if (configs.size() > 1) {
      cache_entries.push_back({{"name", "CMAKE_DEFAULT_BUILD_TYPE"}, {"value", configs.back()}});
    }
    dir.write(reply() + "cache-v2.json", json{{"entries", cache_entries}}.dump());
    json responses = {{{"kind", "codemodel"},
                       {"version", {{"major", 2}, {"minor", minor}}},
                       {"jsonFile", "codemodel-v2.json"}},
                      {{"kind", "toolchains"},
                       {"version", {{"major", 1}, {"minor", 0}}},
                       {"jsonFile", "toolchains-v1.json"}},
                      {{"kind", "cache"},
                       {"version", {{"major", 2}, {"minor", 0}}},
                       {"jsonFile", "cache-v2.json"}}};
    index({{"client-kopt", {{"query.json", {{"responses", responses}}}}}}, configs.size() > 1);
  }

  void index(const json &answer, bool multi = false) {
    dir.write(reply() + "index-2026-01-01T00-00-00-0000.json",
              json{{"cmake",
                    {{"generator",
                      {{"name", multi ? "Ninja Multi-Config" : "Ninja"}, {"multiConfig", multi}}}}},
                   {"objects", json::array()},
                   {"reply", answer}}
                  .dump());
  }
};

// Counts the cmake runs load() asks for, and does nothing.
struct CountingRunner : kopt::util::ProcessRunner {
  int runs = 0;
  std::vector<std::string> argv; ///< the last run's
  kopt::util::ProcessResult run(const kopt::util::Command &command) override {
    ++runs;
    argv = command.argv;
    kopt::util::ProcessResult r;
    r.exit_code = 0;
    return r;
  }
};

} // namespace

TEST_CASE("codemodel minors 2.0 to 2.11 read; newer fields are ignored") {
  for (int minor : {0, 2, 4, 11}) {
    CAPTURE(minor);
    FakeTree tree;
    tree.write(minor, minor == 11);
    fa::CodeModel model = fa::read_reply(tree.build());
    CHECK(model.codemodel_minor == minor);
    CHECK(model.generator == "Ninja");
    REQUIRE(model.configurations.size() == 1);
    const auto &config = model.configurations[0];
    REQUIRE(config.directories.size() == 2);
    CHECK(config.directories[1].source == "/src/k");
    CHECK(config.directories[1].parent == 0u);
    REQUIRE(config.targets.size() == 1);
    const fa::Target &t = config.targets[0];
    CHECK(t.type == "SHARED_LIBRARY");
    CHECK(t.artifacts == std::vector<std::string>{tree.build() + "/k/libkernels.so"});
    CHECK(t.dependencies == std::vector<std::string>{"gen::@1"});
    REQUIRE(t.sources.size() == 4);
    CHECK(t.sources[0].path == "/src/k/a.cpp");
    CHECK(t.sources[2].generated);
    CHECK_FALSE(t.sources[3].compile_group);
    REQUIRE(t.compile_groups.size() == 2);
    CHECK(t.compile_groups[0].standard == (minor >= 2 ? "20" : ""));
    CHECK(t.compile_groups[0].includes[1].system);
    CHECK(model.compiler("CUDA")->path == "/usr/local/cuda/bin/nvcc");
    CHECK(model.cache.at("CMAKE_BUILD_TYPE") == "Release");
  }
}

TEST_CASE("error replies and malformed fields name the file and field") {
  FakeTree tree;
  tree.write(4, false);
  std::string index = tree.build() + "/.cmake/api/v1/reply/index-2026-01-01T00-00-00-0000.json";
  SUBCASE("the whole query answered with an error") {
    tree.index({{"client-kopt", {{"query.json", {{"error", "unknown query file"}}}}}});
    CHECK_THROWS_WITH(fa::read_reply(tree.build()),
                      (index + ": reply.client-kopt.query.json: cmake answered with an error: "
                               "\"unknown query file\"")
                          .c_str());
  }
  SUBCASE("a malformed query, answered as cmake 3.25 does") {
    tree.index(
        {{"client-kopt",
          {{"query.json",
            {{"requests", 3}, {"responses", {{"error", "'requests' member is not an array"}}}}}}}});
    CHECK_THROWS_WITH(fa::read_reply(tree.build()),
                      (index + ": reply.client-kopt.query.json.responses: cmake answered with an "
                               "error: \"'requests' member is not an array\"")
                          .c_str());
  }
  SUBCASE("one request answered with an error") {
    tree.index(
        {{"client-kopt",
          {{"query.json", {{"responses", {{{"error", "no supported version specified"}}}}}}}}});
    CHECK_THROWS_WITH(fa::read_reply(tree.build()),
                      (index + ": reply.client-kopt.query.json.responses[0]: cmake answered with "
                               "an error: \"no supported version specified\"")
                          .c_str());
  }
  SUBCASE("no answer for kopt's client") {
    tree.index(json::object());
    CHECK_THROWS_WITH(fa::read_reply(tree.build()),
                      (index + ": reply.client-kopt: missing").c_str());
  }
  SUBCASE("a field of the wrong type") {
    tree.dir.write(tree.reply() + "target-kernels-Release.json",
                   json{{"name", "kernels"}, {"id", "k"}, {"type", 3}}.dump());
    CHECK_THROWS_WITH(fa::read_reply(tree.build()),
                      (tree.build() + "/.cmake/api/v1/reply/target-kernels-Release.json: type: "
                                      "expected a string, got 3")
                          .c_str());
  }
  SUBCASE("a referenced file that vanished") {
    std::filesystem::remove(tree.dir.path() / (tree.reply() + "target-kernels-Release.json"));
    CHECK_THROWS_AS(fa::read_reply(tree.build()), fa::ReplyVanished);
  }
}

TEST_CASE("load: not a build tree; a fresh reply is read without running cmake") {
  TempDir empty;
  CountingRunner runner;
  std::ostringstream notes;
  CHECK_THROWS_WITH(fa::load(empty.path(), runner, notes),
                    (empty.path().string() + ": not a CMake build tree (no CMakeCache.txt); "
                                             "configure it with cmake first")
                        .c_str());
  FakeTree tree;
  tree.write(4, false);
  auto now = std::filesystem::file_time_type::clock::now();
  std::filesystem::last_write_time(tree.dir.path() /
                                       (tree.reply() + "index-2026-01-01T00-00-00-0000.json"),
                                   now - std::chrono::seconds(20));
  fa::load(tree.build(), runner, notes); // the query is new: cmake must answer it
  CHECK(runner.runs == 1);
  CHECK(runner.argv == std::vector<std::string>{"cmake", tree.build()}); // the cache names none
  CHECK(notes.str() == "kopt import: running `cmake " + tree.build() +
                           "` to answer kopt's File API query (its newest reply is older than "
                           "kopt's query)\n");
  CHECK(std::filesystem::exists(fa::query_file(tree.build())));
  // cmake answered after the query was written: the index is newer than the query.
  std::filesystem::last_write_time(fa::query_file(tree.build()),
                                   std::filesystem::file_time_type::clock::now() -
                                       std::chrono::seconds(30));
  fa::load(tree.build(), runner, notes);
  CHECK(runner.runs == 1);
}

TEST_CASE("load: the tree's own cmake (CMAKE_COMMAND of its cache) answers the query") {
  FakeTree tree;
  tree.write(4, false);
  tree.dir.write("b/CMakeCache.txt",
                 "// The cmake\nCMAKE_COMMAND:INTERNAL=/opt/cmake-3.31/bin/cmake\n"
                 "CMAKE_COMMAND_X:STRING=no\n");
  CHECK(fa::cache_value(tree.build(), "CMAKE_COMMAND") == "/opt/cmake-3.31/bin/cmake");
  CHECK(fa::cache_value(tree.build(), "CMAKE_COMMAN").empty());
  std::filesystem::remove(tree.dir.path() / (tree.reply() + "index-2026-01-01T00-00-00-0000.json"));
  CountingRunner runner;
  std::ostringstream notes;
  CHECK_THROWS(fa::load(tree.build(), runner, notes)); // the fake cmake writes no reply
  CHECK(runner.argv == std::vector<std::string>{"/opt/cmake-3.31/bin/cmake", tree.build()});
  CHECK(notes.str() == "kopt import: running `/opt/cmake-3.31/bin/cmake " + tree.build() +
                           "` to answer kopt's File API query (the tree has no File API reply "
                           "yet)\n");
}

TEST_CASE("select: by target, by source, configuration, unknown names suggested") {
  FakeTree tree;
  tree.write(4, false, {"Debug", "Release"});
  fa::CodeModel model = fa::read_reply(tree.build());
  CHECK(model.multi_config);
  fa::Imported byname = fa::select(model, {"kernels", {}, "", ""});
  CHECK(byname.config == "Release"); // CMAKE_DEFAULT_BUILD_TYPE
  CHECK(byname.language == "CUDA");  // the GPU language when the target has one
  CHECK(byname.standard == "17");
  CHECK(byname.artifact == tree.build() + "/k/Release/libkernels.so");
  CHECK(byname.config_reason == "the tree's CMAKE_DEFAULT_BUILD_TYPE; --config chooses another");
  CHECK(byname.baseline == "library");
  CHECK(byname.baseline_reason == "kernels is a SHARED_LIBRARY: baseline 00 links " +
                                      byname.artifact +
                                      " and compiles no instance, if it defines the "
                                      "family's kopt_instance_ symbols (kopt_add_family "
                                      "checks; --baseline compile to compile them)");
  fa::Imported forced = fa::select(model, {"kernels", {}, "", "", "compile"});
  CHECK(forced.baseline == "compile");
  CHECK(forced.baseline_reason ==
        "--baseline compile: baseline 00 compiles its own instances with kernels's flags");
  fa::Imported bysource = fa::select(model, {"", tree.build() + "/k/gen.cpp", "Debug", ""});
  CHECK(bysource.target == "kernels");
  CHECK(bysource.language == "CXX");
  CHECK(bysource.compiler == "/usr/bin/c++");
  CHECK(bysource.flags == std::vector<std::string>{"-O3", "-DNDEBUG", "-fPIC", "-std=gnu++20"});
  CHECK(bysource.defines ==
        std::vector<std::string>{"FOO=1", "BAR=\"x y\"", "CMAKE_INTDIR=\"Debug\""});
  CHECK(bysource.artifact == tree.build() + "/k/Debug/libkernels.so");
  CHECK_THROWS_WITH(fa::select(model, {"kernel", {}, "", ""}),
                    (tree.build() + ": no target 'kernel' in configuration Release; did you mean "
                                    "'kernels'? (nearest: kernels)")
                        .c_str());
  CHECK_THROWS_WITH(
      fa::select(model, {"kernels", {}, "Relase", ""}),
      (model.index_file.string() +
       ": no configuration 'Relase'; did you mean 'Release'? (nearest: Release, Debug)")
          .c_str());
  CHECK_THROWS_WITH(fa::select(model, {"", "/src/k/c.cpp", "", ""}),
                    (std::string("/src/k/c.cpp: no target of ") + tree.build() +
                     " compiles it; did you mean '/src/k/a.cpp'? (nearest: /src/k/a.cpp, "
                     "/src/k/b.cu, " +
                     tree.build() + "/k/gen.cpp)")
                        .c_str());
}

TEST_CASE("select: separable compilation from the generator's rule; executables lend flags") {
  FakeTree tree;
  tree.write(4, false);
  tree.dir.write("b/CMakeFiles/rules.ninja",
                 "rule CUDA_COMPILER__kernel_Release\n"
                 "  command = /usr/bin/nvcc $DEFINES -x cu -c $in -o $out\n"
                 "rule CUDA_COMPILER__kernels_Release\n"
                 "  depfile = $DEP_FILE\n"
                 "  command = /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler $DEFINES "
                 "$INCLUDES $FLAGS -MD -MT $out -MF $DEP_FILE -x cu -rdc=true -c $in -o $out\n");
  fa::CodeModel model = fa::read_reply(tree.build());
  fa::Imported cuda = fa::select(model, {"kernels", {}, "", ""});
  CHECK(cuda.separable);
  CHECK(cuda.rule_args ==
        std::vector<std::string>{"-forward-unknown-to-host-compiler", "-x", "cu", "-rdc=true"});
  CHECK(cuda.rule_file == tree.build() + "/CMakeFiles/rules.ninja");
  CHECK(cuda.notes.empty());
  fa::Imported cxx = fa::select(model, {"kernels", {}, "", "CXX"});
  CHECK(!cxx.separable); // no CXX rule written here
  CHECK(cxx.rule_file.empty());

  auto path = tree.dir.path() / (tree.reply() + "target-kernels-Release.json");
  json target = json::parse(std::ifstream(path));
  target["type"] = "EXECUTABLE";
  tree.dir.write(tree.reply() + "target-kernels-Release.json", target.dump());
  std::filesystem::remove(tree.dir.path() / "b/CMakeFiles/rules.ninja");
  model = fa::read_reply(tree.build());
  fa::Imported exe = fa::select(model, {"kernels", {}, "", ""});
  CHECK(exe.baseline == "compile");
  CHECK(exe.baseline_reason == "kernels is an EXECUTABLE, not a library of the kernels: baseline "
                               "00 compiles its own instances with the tree's flags");
  CHECK(exe.notes == std::vector<std::string>{
                         "no CUDA compile rule of kernels found for Ninja: cannot tell whether it "
                         "compiles relocatable device code; assumed not"});
  CHECK_THROWS_WITH(fa::select(model, {"kernels", {}, "", "", "library"}),
                    "kopt import --baseline library: kernels is an EXECUTABLE, not a library "
                    "whose file baseline 00 could link");
}

TEST_CASE("fragments split like a shell; the CMake file keeps them whole") {
  CHECK(fa::split_fragment(R"(-O3  -DX="a b" 'c d' e\ f -Xcompiler=-fPIC)") ==
        std::vector<std::string>{"-O3", "-DX=a b", "c d", "e f", "-Xcompiler=-fPIC"});
  fa::Imported m;
  m.target = "kernels";
  m.language = "CUDA";
  m.compiler = "/usr/local/cuda/bin/nvcc";
  m.standard = "17";
  m.fragments = {"--generate-code=arch=compute_90,code=[compute_90,sm_90]"};
  m.defines = {"BAR=\"x y\""};
  m.includes = {{"/opt/sys", true}};
  m.artifact = "/b/libkernels.so";
  std::string text = fa::render_cmake(m);
  CHECK(text.find("set(KOPT_IMPORTED_ARTIFACT \"/b/libkernels.so\")") != std::string::npos);
  CHECK(text.find("\"$<$<COMPILE_LANGUAGE:CUDA>:SHELL:--generate-code=arch=compute_90$<COMMA>"
                  "code=[compute_90$<COMMA>sm_90]>\"") != std::string::npos);
  CHECK(text.find("\"$<$<COMPILE_LANGUAGE:CUDA>:BAR=\\\"x y\\\">\"") != std::string::npos);
  CHECK(text.find("target_include_directories(kopt_imported_kernels_") != std::string::npos);
  CHECK(text.find(" SYSTEM INTERFACE\n") != std::string::npos);
  fa::Imported other = m;
  other.config = "Debug";
  CHECK(fa::render_cmake(other).find("set(KOPT_IMPORTED_INTERFACE \"kopt_imported_kernels_") !=
        std::string::npos);
  CHECK(fa::render_cmake(other) != text); // another configuration: another interface name
  // The standard is in the fragments (-std=...): a compile feature would add a second -std.
  CHECK(text.find("target_compile_features") == std::string::npos);
  CHECK(text.find("set(KOPT_IMPORTED_SEPARABLE OFF)") != std::string::npos);
}

TEST_CASE("select: compile groups of different flags are listed, not guessed; hipcc's HIP is CXX") {
  // Composable Kernel's shape: an instance library whose sources carry extra -mllvm pairs of
  // their own, compiled by the hipcc its CMakeLists sets after project().
  fa::CodeModel model;
  model.build_dir = "/b";
  model.index_file = "/b/index.json";
  model.generator = "Ninja";
  fa::Target t;
  t.name = "ck_instances";
  t.type = "OBJECT_LIBRARY";
  t.json_file = "/b/target-ck.json";
  t.sources = {{"/src/a.cpp", false, 0}, {"/src/b.cpp", false, 1}, {"/src/c.cpp", false, 0}};
  t.compile_groups = {
      {"HIP", {"-O3", "-mllvm -greedy-reverse-local-assignment=1"}, {}, {}, "17", {0, 2}},
      {"HIP",
       {"-O3", "-mllvm -greedy-reverse-local-assignment=1",
        "-mllvm -amdgpu-coerce-illegal-types=1"},
       {},
       {},
       "17",
       {1}}};
  fa::Configuration config;
  config.name = "Release";
  config.targets = {t};
  model.configurations = {config};
  model.compilers = {{"HIP", "/opt/rocm/bin/hipcc", "Clang", "17"}};
  CHECK_THROWS_WITH(
      fa::select(model, {"ck_instances", {}, "", ""}),
      "/b/target-ck.json: target 'ck_instances' compiles its HIP sources in 2 groups with "
      "different flags: group 1 (/src/a.cpp and 1 more): -O3 -mllvm "
      "-greedy-reverse-local-assignment=1; group 2 (/src/b.cpp): -O3 -mllvm "
      "-greedy-reverse-local-assignment=1 -mllvm -amdgpu-coerce-illegal-types=1; give --source "
      "with the kernel source whose flags the family should compile with");
  fa::Imported b = fa::select(model, {"", "/src/b.cpp", "", ""});
  CHECK(b.fragments.size() == 3);
  CHECK(b.language == "CXX");
  CHECK(b.compiler == "/opt/rocm/bin/hipcc");
  CHECK(b.notes.back() ==
        "the tree compiles HIP with /opt/rocm/bin/hipcc, which CMake's HIP language refuses: the "
        "family compiles its instances as CXX with it (configure the consumer with "
        "-DCMAKE_CXX_COMPILER=/opt/rocm/bin/hipcc)");
  // The pairs stay whole and in order: one SHELL: group that CMake cannot de-duplicate.
  CHECK(fa::render_cmake(b).find(
            "\"$<$<COMPILE_LANGUAGE:CXX>:SHELL:-O3 -mllvm -greedy-reverse-local-assignment=1 "
            "-mllvm -amdgpu-coerce-illegal-types=1>\"") != std::string::npos);
  t.compile_groups[1].fragments = t.compile_groups[0].fragments; // the same flags: one choice
  model.configurations[0].targets = {t};
  CHECK(fa::select(model, {"ck_instances", {}, "", ""}).language == "CXX");
}

TEST_SUITE_END();
