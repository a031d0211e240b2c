#include "fileapi/compdb.hpp"

#include "util/error.hpp"

#include <doctest/doctest.h>

namespace fa = kopt::fileapi;
using nlohmann::json;

TEST_SUITE_BEGIN("fileapi::compdb");

TEST_CASE("a compile database's entry: the compile step's own arguments go, the rest in order") {
  // As torch's cpp_extension writes aiter's JIT build: hipcc -MMD -MF x.d <cflags> -c src -o out
  // <post cflags>; relative include folders are the entry's directory's.
  json db = json::array(
      {{{"directory", "/jit/build/module_gemm/build"},
        {"file", "/jit/src/other.cpp"},
        {"command", "/usr/bin/g++ -c /jit/src/other.cpp -o other.o"}},
       {{"directory", "/jit/build/module_gemm/build"},
        {"file", "/jit/src/gemm_instances.cpp"},
        {"command", "/opt/rocm/bin/hipcc -MMD -MF gemm.o.d -DTORCH_EXTENSION_NAME=module_gemm "
                    "-I../include -isystem /torch/include -fPIC -std=c++17 -mllvm -amdgpu-early-"
                    "inline-all=true -mllvm -amdgpu-function-calls=false '-DNAME=\"a b\"' -c "
                    "/jit/src/gemm_instances.cpp -o gemm.o --offload-arch=gfx942"}}});
  fa::Imported m = fa::select_from_database(db, "/jit/compile_commands.json",
                                            {"", "/jit/src/gemm_instances.cpp", "", "", ""});
  CHECK(m.compiler == "/opt/rocm/bin/hipcc");
  CHECK(m.language == "CXX"); // hipcc is the C++ compiler: CMake's HIP language refuses it
  CHECK(m.standard == "17");
  CHECK(m.type == "COMPILE_COMMANDS");
  CHECK(m.baseline == "compile");
  CHECK(m.flags == std::vector<std::string>{
                       "-DTORCH_EXTENSION_NAME=module_gemm", "-I/jit/build/module_gemm/include",
                       "-isystem", "/torch/include", "-fPIC", "-std=c++17", "-mllvm",
                       "-amdgpu-early-inline-all=true", "-mllvm", "-amdgpu-function-calls=false",
                       "-DNAME=\"a b\"", "--offload-arch=gfx942"});
  // Each argument quoted for the shell where needed, so that SHELL: splits it back.
  CHECK(m.fragments[10] == "'-DNAME=\"a b\"'");
  CHECK(fa::split_fragment(m.fragments[10]) == std::vector<std::string>{"-DNAME=\"a b\""});
  std::string cmake = fa::render_cmake(m);
  CHECK(cmake.find("SHELL:-DTORCH_EXTENSION_NAME=module_gemm -I/jit/build/module_gemm/include "
                   "-isystem /torch/include -fPIC -std=c++17 -mllvm -amdgpu-early-inline-all=true "
                   "-mllvm -amdgpu-function-calls=false") != std::string::npos);
}

TEST_CASE("a compile database: unknown sources, two commands of one source, bad entries") {
  json one = {{"directory", "/b"}, {"file", "a.cpp"}, {"arguments", {"g++", "-O2", "-c", "a.cpp"}}};
  json db = json::array({one});
  CHECK_THROWS_WITH_AS(fa::select_from_database(db, "cc.json", {"", "/b/x.cpp", "", "", ""}),
                       "/b/x.cpp: no entry of cc.json compiles it; did you mean '/b/a.cpp'? (1 "
                       "entries)",
                       kopt::Error);
  json two = one;
  two["arguments"] = {"g++", "-O3", "-c", "a.cpp"};
  db.push_back(two);
  CHECK_THROWS_WITH_AS(fa::select_from_database(db, "cc.json", {"", "/b/a.cpp", "", "", ""}),
                       "cc.json: /b/a.cpp is compiled 2 times with different arguments (entries "
                       "1 and 2): which one the family should use is not kopt's guess; give a "
                       "database of one build",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(
      fa::select_from_database(json::array({{{"file", "a.cpp"}}}), "cc.json",
                               {"", "/b/a.cpp", "", "", ""}),
      "cc.json: entry 1: expected an object with 'directory', 'file' and 'arguments' or 'command'",
      kopt::Error);
  CHECK_THROWS_WITH_AS(
      fa::select_from_database(json::array({one}), "cc.json", {"", "/b/a.cpp", "", "", "library"}),
      "kopt import --baseline library: a compile database names no library to "
      "link",
      kopt::Error);
}

TEST_SUITE_END();
