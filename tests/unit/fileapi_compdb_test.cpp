#include "fileapi/compdb.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

namespace fa = kopt::fileapi;
namespace fs = std::filesystem;
using kopt::test::TempDir;
using nlohmann::json;

TEST_SUITE_BEGIN("fileapi::compdb");

TEST_CASE("a compile database's entry: the compile step's own arguments go, the rest in order") {
  // As torch's cpp_extension writes aiter's JIT build: hipcc -MMD -MF x.d <cflags> -c src -o out
  // <post cflags>; relative include folders are the entry's directory's (which must exist).
  TempDir tmp;
  std::string root = fa::normal_path(tmp.path());
  fs::create_directories(root + "/jit/build/module_gemm/build");
  json db = json::array(
      {{{"directory", root + "/jit/build/module_gemm/build"},
        {"file", "/jit/src/other.cpp"},
        {"command", "/usr/bin/g++ -c /jit/src/other.cpp -o other.o"}},
       {{"directory", root + "/jit/build/module_gemm/build"},
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
                       "-DTORCH_EXTENSION_NAME=module_gemm",
                       "-I" + root + "/jit/build/module_gemm/include", "-isystem", "/torch/include",
                       "-fPIC", "-std=c++17", "-mllvm", "-amdgpu-early-inline-all=true", "-mllvm",
                       "-amdgpu-function-calls=false", "-DNAME=\"a b\"", "--offload-arch=gfx942"});
  // Each argument quoted for the shell where needed, so that SHELL: splits it back.
  CHECK(m.fragments[10] == "'-DNAME=\"a b\"'");
  CHECK(fa::split_fragment(m.fragments[10]) == std::vector<std::string>{"-DNAME=\"a b\""});
  std::string cmake = fa::render_cmake(m);
  CHECK(cmake.find("SHELL:-DTORCH_EXTENSION_NAME=module_gemm -I" + root +
                   "/jit/build/module_gemm/include -isystem /torch/include -fPIC -std=c++17 -mllvm "
                   "-amdgpu-early-inline-all=true "
                   "-mllvm -amdgpu-function-calls=false") != std::string::npos);
}

TEST_CASE("a compile database: unknown sources, two commands of one source, bad entries") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "b");
  std::string b = fa::normal_path(tmp.path() / "b");
  json one = {{"directory", b}, {"file", "a.cpp"}, {"arguments", {"g++", "-O2", "-c", "a.cpp"}}};
  json db = json::array({one});
  CHECK_THROWS_WITH_AS(
      fa::select_from_database(db, "cc.json", {"", b + "/x.cpp", "", "", ""}),
      (b + "/x.cpp: no entry of cc.json compiles it; did you mean '" + b + "/a.cpp'? (1 entries)")
          .c_str(),
      kopt::Error);
  json two = one;
  two["arguments"] = {"g++", "-O3", "-c", "a.cpp"};
  db.push_back(two);
  CHECK_THROWS_WITH_AS(fa::select_from_database(db, "cc.json", {"", b + "/a.cpp", "", "", ""}),
                       ("cc.json: " + b +
                        "/a.cpp is compiled 2 times with different arguments (entries 1 and 2): "
                        "which one the family should use is not kopt's guess; give a database of "
                        "one build")
                           .c_str(),
                       kopt::Error);
  CHECK_THROWS_WITH_AS(
      fa::select_from_database(json::array({{{"file", "a.cpp"}}}), "cc.json",
                               {"", "/b/a.cpp", "", "", ""}),
      "cc.json: entry 1: expected an object with 'directory', 'file' and 'arguments' or 'command'",
      kopt::Error);
  CHECK_THROWS_WITH_AS(fa::select_from_database(json::array({one}), "cc.json",
                                                {"", b + "/a.cpp", "", "", "library"}),
                       "kopt import --baseline library: a compile database names no library to "
                       "link",
                       kopt::Error);
}

// The error selecting `source` from a database of the one `entry` gives, or "" when none.
std::string refusal(const json &entry, const std::string &source) {
  try {
    fa::select_from_database(json::array({entry}), "cc.json", {"", source, "", "", ""});
  } catch (const kopt::Error &e) {
    return e.what();
  }
  return "";
}

TEST_CASE("a compile database's arguments the import cannot carry are refused, named") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "b");
  std::string b = fa::normal_path(tmp.path() / "b");
  std::string a = b + "/a.cpp";
  auto with = [&](json arguments) {
    return json{{"directory", b}, {"file", "a.cpp"}, {"arguments", std::move(arguments)}};
  };
  // A line break would end the consumer's build.ninja line; a NUL byte ends the string.
  CHECK(refusal(with({"g++", "-DX=1\n2", "-c", "a.cpp"}), a) ==
        "cc.json: entry 1: argument 2 '-DX=1\\n2' holds a line break: the imported flags cannot "
        "carry it into a build file");
  CHECK(refusal(with({"g++", std::string("-DX=1\0", 6), "a.cpp"}), a) ==
        "cc.json: entry 1: argument 2 '-DX=1\\0' holds a NUL byte: the imported flags cannot "
        "carry it into a build file");
  // An unterminated quote would make the rest of the command one argument.
  json open = {{"directory", b}, {"file", "a.cpp"}, {"command", "g++ -O2 '-DX=a b -c a.cpp"}};
  CHECK(refusal(open, a) == "cc.json: entry 1: command: argument 3 '-DX=a b -c a.cpp': its ' "
                            "quote is never closed");
  // No directory, or one that is not there: relative paths would be read against nowhere.
  json no_dir = with({"g++", "-c", "a.cpp"});
  no_dir["directory"] = "";
  no_dir["file"] = a;
  CHECK(refusal(no_dir, a).find("cc.json: entry 1: directory '': expected the absolute folder") ==
        0);
  json gone = with({"g++", "-c", "a.cpp"});
  gone["directory"] = b + "/removed";
  gone["file"] = a;
  CHECK(refusal(gone, a) == "cc.json: entry 1: directory " + b +
                                "/removed is not a folder (any more): its relative paths and "
                                "response files cannot be read against it");
}

TEST_CASE("a compile database's response files are read against the entry's directory") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "b/inc");
  std::string b = fa::normal_path(tmp.path() / "b");
  std::string a = b + "/a.cpp";
  tmp.write("b/flags.rsp", "-O2 -Iinc\n'-DNAME=\"a b\"' @more.rsp\n");
  tmp.write("b/more.rsp", "-DMORE=1");
  tmp.write("b/self.rsp", "-O1 @self.rsp");
  auto with = [&](const std::string &rsp) {
    return json{{"directory", b}, {"file", "a.cpp"}, {"arguments", {"g++", rsp, "-c", "a.cpp"}}};
  };
  fa::Imported m =
      fa::select_from_database(json::array({with("@flags.rsp")}), "cc.json", {"", a, "", "", ""});
  CHECK(m.flags ==
        std::vector<std::string>{"-O2", "-I" + b + "/inc", "-DNAME=\"a b\"", "-DMORE=1"});
  CHECK(refusal(with("@missing.rsp"), a) ==
        "cc.json: entry 1: argument 2 '@missing.rsp': the response file " + b +
            "/missing.rsp (against the entry's directory) cannot read: No such file or directory");
  CHECK(refusal(with("@self.rsp"), a) == "cc.json: entry 1: response file " + b +
                                             "/self.rsp: argument 2 '@self.rsp': the response "
                                             "file " +
                                             b + "/self.rsp is read again inside itself");
}

TEST_SUITE_END();
