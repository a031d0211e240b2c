#include "buildinfo/expansion.hpp"
#include "buildinfo/resource_usage.hpp"
#include "buildinfo/symbols.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <doctest/doctest.h>

namespace bi = kopt::buildinfo;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

std::string read(const std::string &name) {
  return kopt::util::read_file(fixture("identity/" + name));
}

std::vector<std::string> names(const std::vector<bi::Interposition> &refused) {
  std::vector<std::string> out;
  for (const auto &r : refused) {
    out.push_back(bi::demangle(r.candidate.name) + " <- " + r.other.file);
  }
  return out;
}

// Every line of an expansion is named by its file; the candidate's k.hpp is left out.
std::string name_of(const std::string &file) { return file.ends_with("/k.hpp") ? "" : file; }

} // namespace

TEST_SUITE_BEGIN("buildinfo::symbols");

TEST_CASE("shell words: quotes, escapes and && steps") {
  CHECK(bi::shell_words(R"(: && c++ -L"/opt/cuda lib" 'a b'\ c -o x&&cd /b)") ==
        std::vector<std::string>{":", "&&", "c++", "-L/opt/cuda lib", "a b c", "-o", "x", "&&",
                                 "cd", "/b"});
}

TEST_CASE("the link step of the harness binary names its objects, archives and -l/-L") {
  TempDir tmp;
  bi::LinkInputs link = bi::parse_link_command(read("link_commands.txt"), "candidate_01", "/b");
  CHECK(link.objects == std::vector<std::filesystem::path>{
                            "/b/CMakeFiles/candidate_01.dir/src/harness.cpp.o",
                            "/b/CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o",
                            "/b/CMakeFiles/candidate_01.dir/kopt/gen/01/kopt_registry.cpp.o"});
  CHECK(link.archives == std::vector<std::filesystem::path>{"/k/lib/libkopt_harness.a"});
  CHECK(link.search == std::vector<std::filesystem::path>{"/opt/cuda lib"});
  CHECK(link.libraries == std::vector<std::string>{"cudart_static", "rt"});
  CHECK(bi::parse_link_command(read("link_commands.txt"), "candidate_02", "/b").objects.empty());

  SUBCASE("-l names resolve to static archives only where no shared library is beside them") {
    tmp.write("lib/libcudart_static.a", "");
    tmp.write("lib/librt.a", "");
    tmp.write("lib/librt.so", "");
    link.search = {tmp.path() / "lib"};
    CHECK(bi::static_libraries(link) ==
          std::vector<std::filesystem::path>{tmp.path() / "lib" / "libcudart_static.a"});
  }
}

TEST_CASE("ldd: loaded libraries, without the vdso and the unfound") {
  CHECK(bi::parse_ldd(read("ldd.txt")) ==
        std::vector<std::filesystem::path>{
            "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
            "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"});
}

TEST_CASE("nm -A: file, name without version, weak or strong") {
  auto shared = bi::parse_nm(read("nm_shared.txt"), true);
  REQUIRE(shared.size() == 4); // the version's own absolute symbol is left out
  CHECK(shared[1].file == "/lib/x86_64-linux-gnu/libc.so.6");
  CHECK(shared[1].name == "clock_gettime");
  CHECK(shared[1].shared);
  auto harness = bi::parse_nm(read("nm_harness.txt"), false);
  REQUIRE(harness.size() == 5);
  CHECK(harness[3].file == "/k/lib/libkopt_harness.a:inputs.cpp.o");
  CHECK(!harness[3].weak);
  CHECK(harness[1].weak);
}

TEST_CASE("the symbol rule: which candidate definitions are refused") {
  auto own = bi::parse_nm(read("nm_instances.txt"), false);
  auto others = bi::parse_nm(read("nm_harness.txt"), false);
  auto shared = bi::parse_nm(read("nm_shared.txt"), true);
  others.insert(others.end(), shared.begin(), shared.end());
  // Passes: its own instance symbol (no one else defines it), std::min<long> (weak on both
  // sides), helper's static local (GNU unique here, weak in the harness).
  CHECK(names(bi::interpositions(own, others)) ==
        std::vector<std::string>{
            // strong in the candidate, weak in the harness's object
            "strong() <- /b/CMakeFiles/candidate_01.dir/src/harness.cpp.o",
            // weak in the candidate, strong in the harness library
            "kopt::harness::poison(float*, unsigned long) <- /k/lib/libkopt_harness.a:inputs.cpp.o",
            // exported by a shared library: refused whatever the binding
            "std::chrono::_V2::steady_clock::now() <- /lib/x86_64-linux-gnu/libstdc++.so.6",
            "clock_gettime <- /lib/x86_64-linux-gnu/libc.so.6"});
}

TEST_CASE("nm -A -u: what an object calls; the reference rule refuses profiler control, CUPTI "
          "and run-time lookup by dlsym") {
  auto used = bi::parse_nm_undefined(read("nm_instances_undefined.txt"));
  REQUIRE(used.size() == 6);
  CHECK(used[0].file == "/b/CMakeFiles/candidate_01.dir/kopt/gen/01/instances/tiny_1x1.cpp.o");
  CHECK(used[0].name == "cudaProfilerStop");
  CHECK(used[3].name == "dlsym"); // without its version
  // Definitions are not references.
  CHECK(bi::parse_nm_undefined(read("nm_instances.txt")).empty());
  for (const char *name :
       {"cudaProfilerStart", "cudaProfilerStop", "cuProfilerStart", "cuProfilerStop",
        "cuptiActivityDisable", "cuptiFinalize", "dlopen", "dlsym", "dlvsym", "dlmopen"}) {
    CHECK_MESSAGE(!bi::forbidden_reference(name).empty(), name);
  }
  // A TMA kernel fetches cuTensorMapEncodeTiled through a driver entry point.
  for (const char *name : {"memcpy", "_ZdlPv", "cudaLaunchKernel", "cudaMemcpyAsync",
                           "cudaEventRecord", "nvtxRangePushA", "cup", "cuGetProcAddress_v2",
                           "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion"}) {
    CHECK_MESSAGE(bi::forbidden_reference(name).empty(), name);
  }
}

TEST_CASE("demangle leaves C names alone") {
  CHECK(bi::demangle("clock_gettime") == "clock_gettime");
  CHECK(bi::demangle("_ZSt3minIlERKT_S2_S2_") ==
        "long const& std::min<long>(long const&, long const&)");
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("buildinfo::expansion");

TEST_CASE("a compile command becomes its preprocessing") {
  SUBCASE("kopt's launcher and ccache are dropped; its --cwd is where it runs") {
    auto command = bi::preprocess_command(
        "/k/kopt launch-compile --cwd /b/gen/01 --base-dir /w -- /usr/bin/ccache /usr/bin/c++ "
        "-I/b/gen/01 -O3 -std=c++17 -MD -MT CMakeFiles/x.o -MF CMakeFiles/x.o.d -o "
        "CMakeFiles/x.o -c /src/harness.cpp",
        "/b");
    CHECK(command.cwd == "/b/gen/01");
    CHECK(command.argv == std::vector<std::string>{"/usr/bin/c++", "-E", "-I/b/gen/01", "-O3",
                                                   "-std=c++17", "/src/harness.cpp"});
  }
  SUBCASE("nvcc keeps its flags") {
    auto command = bi::preprocess_command(
        "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -I/b/gen/01 "
        "--generate-code=arch=compute_90,code=[sm_90] -MD -MT x.o -MF x.o.d -x cu -c /s/h.cu "
        "-o x.o",
        "/b");
    CHECK(command.cwd == "/b");
    CHECK(command.argv == std::vector<std::string>{
                              "/usr/local/cuda/bin/nvcc", "-E", "-forward-unknown-to-host-compiler",
                              "-I/b/gen/01", "--generate-code=arch=compute_90,code=[sm_90]", "-x",
                              "cu", "/s/h.cu"});
  }
  SUBCASE("HIP preprocesses the host side") {
    auto command = bi::preprocess_command(
        "/opt/rocm/bin/hipcc --offload-arch=gfx90a -x hip -c a.cpp -o a.o", "/b");
    CHECK(command.argv == std::vector<std::string>{"/opt/rocm/bin/hipcc", "-E", "--cuda-host-only",
                                                   "--offload-arch=gfx90a", "-x", "hip", "a.cpp"});
  }
}

TEST_CASE("expansions compare by the source line outside the editable files") {
  auto baseline = bi::parse_expansion(read("expand_baseline.i"), name_of);
  CHECK(baseline.text.at({"/src/harness.cpp", 4}) ==
        std::set<std::string>{"void poison_output() { poison(c_.data(), c_.size()); }"});
  CHECK(!baseline.files.count(""));
  CHECK(baseline.text.count({"/b/gen/01/kopt_manifest.h", 4}) == 1);

  SUBCASE("a macro of the candidate changes a harness line") {
    auto macro = bi::parse_expansion(read("expand_macro.i"), name_of);
    auto at = bi::first_difference(baseline, macro);
    REQUIRE(at);
    CHECK(*at == bi::SourceLine{"/src/harness.cpp", 4});
  }
  SUBCASE("whitespace, and a header only the candidate reads, change nothing") {
    auto extra = bi::parse_expansion(read("expand_extra_header.i"), name_of);
    CHECK(extra.files.count("/usr/include/immintrin.h"));
    CHECK(!bi::first_difference(baseline, extra));
  }
  SUBCASE("a line switched on in a file both read is a difference") {
    std::string text = read("expand_baseline.i") + "# 9 \"/src/harness.cpp\"\nint extra;\n";
    auto more = bi::parse_expansion(text, name_of);
    auto at = bi::first_difference(baseline, more);
    REQUIRE(at);
    CHECK(*at == bi::SourceLine{"/src/harness.cpp", 9});
  }
  SUBCASE("a harness header the candidate keeps out (its include guard defined) is missing") {
    std::string text = read("expand_baseline.i");
    text.replace(text.find("void poison(float"), 42, "\n");
    auto guarded = bi::parse_expansion(text, name_of);
    auto at = bi::first_difference(baseline, guarded);
    REQUIRE(at);
    CHECK(*at == bi::SourceLine{"/h/include/kopt/harness/inputs.hpp", 1});
  }
}

TEST_SUITE_END();
