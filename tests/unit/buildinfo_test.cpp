#include "buildinfo/compile_launcher.hpp"
#include "buildinfo/ninja_deps.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

namespace bi = kopt::buildinfo;

TEST_SUITE_BEGIN("buildinfo");

TEST_CASE("ninja -t deps output parses into absolute paths") {
  std::string text = "CMakeFiles/candidate_01.dir/kopt/gen/01/instances/a.cpp.o: #deps 3, deps "
                     "mtime 1700000000000 (VALID)\n"
                     "    /b/kopt/gen/01/instances/a.cpp\n"
                     "    kopt/gen/01/src/k.hpp\n"
                     "    /usr/include/stdc-predef.h\n"
                     "\n"
                     "other.o: #deps 1, deps mtime 1 (STALE)\n"
                     "    x.cpp\n";
  auto deps = bi::parse_ninja_deps(text, "/b");
  REQUIRE(deps.size() == 2);
  auto &a = deps["CMakeFiles/candidate_01.dir/kopt/gen/01/instances/a.cpp.o"];
  CHECK(a == std::vector<std::string>{"/b/kopt/gen/01/instances/a.cpp", "/b/kopt/gen/01/src/k.hpp",
                                      "/usr/include/stdc-predef.h"});
  CHECK(deps["other.o"] == std::vector<std::string>{"/b/x.cpp"});
}

TEST_CASE("identity: own sources pass, another candidate's sources fail") {
  bi::NinjaDeps deps;
  deps["CMakeFiles/candidate_02.dir/a.o"] = {"/b/gen/02/instances/a.cpp", "/b/gen/02/src/k.hpp"};
  deps["CMakeFiles/candidate_02.dir/h.o"] = {"/fam/harness.cpp", "/b/gen/02/kopt_manifest.h"};
  deps["CMakeFiles/candidate_00.dir/a.o"] = {"/b/gen/00/src/k.hpp"};
  SUBCASE("own") {
    auto check = bi::check_identity(deps, "candidate_02", "/b/gen", "/b/gen/02", "k.hpp",
                                    {"/fam/candidates/00", "/fam/candidates/02"});
    CHECK(check.ok);
    CHECK(check.objects == 2);
  }
  SUBCASE("bypassed: the baseline's generated header") {
    deps["CMakeFiles/candidate_02.dir/b.o"] = {"/b/gen/00/src/k.hpp"};
    auto check = bi::check_identity(deps, "candidate_02", "/b/gen", "/b/gen/02", "k.hpp", {});
    CHECK_FALSE(check.ok);
    REQUIRE(check.problems.size() == 1);
    CHECK(check.problems[0] == "CMakeFiles/candidate_02.dir/b.o was compiled from "
                               "/b/gen/00/src/k.hpp, not from this candidate's sources in "
                               "/b/gen/02");
  }
  SUBCASE("bypassed: a user's candidate folder on the include path") {
    deps["CMakeFiles/candidate_02.dir/b.o"] = {"/fam/candidates/00/k.hpp"};
    auto check = bi::check_identity(deps, "candidate_02", "/b/gen", "/b/gen/02", "k.hpp",
                                    {"/fam/candidates/00"});
    CHECK_FALSE(check.ok);
  }
  SUBCASE("an IMPORTED family's instance target, under a PREFIX") {
    deps["imported-build/CMakeFiles/p_candidate_02_instances.dir/a.o"] = {"/b/gen/00/src/k.hpp"};
    deps["CMakeFiles/p_candidate_02.dir/h.o"] = {"/b/gen/02/src/k.hpp"};
    auto check = bi::check_identity(deps, "p_candidate_02", "/b/gen", "/b/gen/02", "k.hpp", {});
    CHECK(check.objects == 2);
    CHECK(check.problems ==
          std::vector<std::string>{"imported-build/CMakeFiles/p_candidate_02_instances.dir/a.o was "
                                   "compiled from /b/gen/00/src/k.hpp, not from this candidate's "
                                   "sources in /b/gen/02"});
  }
  SUBCASE("never built") {
    auto check = bi::check_identity(deps, "candidate_09", "/b/gen", "/b/gen/09", "k.hpp", {});
    CHECK_FALSE(check.ok);
    CHECK(check.problems[0] == "ninja recorded no dependencies for target candidate_09 (not "
                               "built yet, or not built by ninja)");
  }
}

TEST_CASE("compile arguments: relative outputs become absolute") {
  std::vector<std::string> args = {"ccache",      "/usr/bin/c++",
                                   "-I/b/gen/01", "-MD",
                                   "-MT",         "CMakeFiles/t.dir/a.cpp.o",
                                   "-MF",         "CMakeFiles/t.dir/a.cpp.o.d",
                                   "-o",          "CMakeFiles/t.dir/a.cpp.o",
                                   "-c",          "/b/gen/01/a.cpp",
                                   "@rsp.txt"};
  auto out = bi::rewrite_compile_args(args, "/b");
  CHECK(out[5] == "CMakeFiles/t.dir/a.cpp.o"); // -MT keeps ninja's target text
  CHECK(out[7] == "/b/CMakeFiles/t.dir/a.cpp.o.d");
  CHECK(out[9] == "/b/CMakeFiles/t.dir/a.cpp.o");
  CHECK(out[11] == "/b/gen/01/a.cpp");
  CHECK(out[12] == "@/b/rsp.txt");
}

TEST_CASE("depfiles: paths made absolute against the compile's folder, target restored") {
  std::string text = "CMakeFiles/other.dir/a.cpp.o: instances/a.cpp \\\n"
                     " src/my\\ k.hpp /usr/include/stdio.h\n"
                     "src/my\\ k.hpp:\n";
  CHECK(bi::rewrite_depfile(text, "/b/gen/01", "CMakeFiles/t.dir/a.cpp.o", "/b") ==
        "CMakeFiles/t.dir/a.cpp.o: \\\n  /b/gen/01/instances/a.cpp \\\n  /b/gen/01/src/my\\ k.hpp "
        "\\\n  /usr/include/stdio.h\n");
}

TEST_CASE("depfiles: a path ninja cannot read whole is named relative to the build folder") {
  // ninja's depfile parser ends a name at a quote and has no escape for one; `$` is `$$`.
  CHECK(bi::ninja_depfile_can_hold("/t/a b/#1/$x/caf\xc3\xa9/[k]+v,w@~.hpp"));
  CHECK_FALSE(bi::ninja_depfile_can_hold("/t/it's"));
  CHECK_FALSE(bi::ninja_depfile_can_hold("/t/a\"b"));
  CHECK_FALSE(bi::ninja_depfile_can_hold("/t/a;b&c"));
  CHECK_FALSE(bi::ninja_depfile_can_hold("/t/a\\b"));
  CHECK_FALSE(bi::ninja_depfile_can_hold("/t/a\tb"));
  std::string root = "/t/it's $x dir \xc3\xa9";
  std::string text = "o.o: instances/a.cpp src/k.hpp \\\n /usr/include/stdio.h /o/$$v/h.hpp\n";
  CHECK(bi::rewrite_depfile(text, root + "/b/gen/01", "CMakeFiles/t.dir/a.cpp.o", root + "/b") ==
        "CMakeFiles/t.dir/a.cpp.o: \\\n  gen/01/instances/a.cpp \\\n  gen/01/src/k.hpp \\\n"
        "  /usr/include/stdio.h \\\n  /o/$$v/h.hpp\n");
  // A source beside the build folder goes up to the folder both share; a path whose quote is
  // below that stays absolute (ninja cannot read either form).
  CHECK(bi::ninja_depfile_word(root + "/src/h.hpp", root + "/b") == "../src/h.hpp");
  CHECK(bi::ninja_depfile_word("/t/it's/h.hpp", "/u/b") == "/t/it's/h.hpp");
  CHECK(bi::ninja_depfile_word("/t/a $b#", "/u/b") == "/t/a\\ $$b\\#");
  // Where neither form could be read, the identity check's refusal says why.
  bi::NinjaDeps deps{{"CMakeFiles/candidate_02.dir/a.o", {"/t/it"}}};
  auto check =
      bi::check_identity(deps, "candidate_02", "/t/it's/gen", "/t/it's/gen/02", "k.hpp", {});
  REQUIRE(check.problems.size() == 1);
  CHECK(check.problems[0].find("ninja's depfiles cannot name a path that holds a quote") !=
        std::string::npos);
}

TEST_CASE("diagnostics: generated copies are named by the user's file and line") {
  std::map<std::string, bi::SourceOrigin> origins = {
      {"src/gemm_kernel.hpp", {"/fam/candidates/09/gemm_kernel.hpp", 0, 0, 0}},
      {"instances/gemm_16x16x16.cpp", {"/fam/instance.cpp.in", 2, 3, -1}}};
  std::string gcc = "In file included from instances/gemm_16x16x16.cpp:2:\n"
                    "instances/../src/gemm_kernel.hpp: In function 'void f()':\n"
                    "instances/../src/gemm_kernel.hpp:39:25: error: 'x' was not declared\n"
                    "   39 |   return x;\n"
                    "/b/gen/09/src/gemm_kernel.hpp:40:1: note: std::vector<int> a:1\n"
                    "instances/gemm_16x16x16.cpp:7:15: error: static assertion failed\n"
                    "src/other.hpp:3:1: warning: not a copy kopt knows\n";
  CHECK(bi::rewrite_diagnostics(gcc, "/b/gen/09", origins) ==
        "In file included from /fam/instance.cpp.in:1:\n"
        "/fam/candidates/09/gemm_kernel.hpp: In function 'void f()':\n"
        "/fam/candidates/09/gemm_kernel.hpp:39:25: error: 'x' was not declared\n"
        "   39 |   return x;\n"
        "/fam/candidates/09/gemm_kernel.hpp:40:1: note: std::vector<int> a:1\n"
        "instances/gemm_16x16x16.cpp:7:15: error: static assertion failed\n"
        "src/other.hpp:3:1: warning: not a copy kopt knows\n");
  CHECK(bi::rewrite_diagnostics(gcc, "/b/gen/09", {}) == gcc);
}

TEST_CASE("diagnostics: other files named relative to the candidate's folder are named whole") {
  kopt::test::TempDir tmp;
  auto harness = tmp.write("src/fam/harness.cpp", "");
  std::filesystem::create_directories(tmp.path() / "b/gen/09");
  std::string gcc = "In file included from ./kopt_manifest.h:10,\n"
                    "                 from ../../../src/fam/harness.cpp:3:\n"
                    "../../../src/fam/missing.cpp:3: note: no such file, left alone\n";
  CHECK(bi::rewrite_diagnostics(gcc, tmp.path() / "b/gen/09", {}) ==
        "In file included from ./kopt_manifest.h:10,\n"
        "                 from " +
            harness.string() +
            ":3:\n"
            "../../../src/fam/missing.cpp:3: note: no such file, left alone\n");
}

TEST_CASE("source origins come from the candidate folder's manifest.json") {
  kopt::test::TempDir tmp;
  CHECK(bi::read_source_origins(tmp.path()).empty());
  tmp.write("manifest.json", R"({"sources": {"src/k.hpp": {"file": "/fam/k.hpp"},
    "instances/a.cpp": {"file": "/fam/t.in", "first_line": 2, "last_line": 9, "line_offset": -1}}})");
  auto origins = bi::read_source_origins(tmp.path());
  REQUIRE(origins.size() == 2);
  CHECK(origins["src/k.hpp"].file == "/fam/k.hpp");
  CHECK(origins["src/k.hpp"].last_line == 0);
  CHECK(origins["instances/a.cpp"].first_line == 2);
  CHECK(origins["instances/a.cpp"].line_offset == -1);
  tmp.write("manifest.json", "{not json");
  CHECK(bi::read_source_origins(tmp.path()).empty());
}

TEST_SUITE_END();
