#include "candidate/new_candidate.hpp"
#include "candidate/patch.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::candidate::parse_patch;
using kopt::candidate::PatchFile;
using kopt::test::fixture;
using kopt::util::read_file;

TEST_SUITE_BEGIN("candidate::patch");

TEST_CASE("git diff --binary: text, new, binary and spaced sections") {
  auto files = parse_patch(read_file(fixture("patch/git_binary.patch")), "p");
  REQUIRE(files.size() == 4);
  CHECK(files[0].path() == "fam/build/o.txt");
  CHECK(files[0].old_path.empty());
  CHECK(files[0].new_mode == "100644");
  CHECK(files[0].line == 1);
  CHECK(files[1].old_path == "fam/k.hpp");
  CHECK(files[1].new_path == "fam/k.hpp");
  CHECK_FALSE(files[1].binary);
  CHECK(files[1].hunks == "@@ -1,2 +1,2 @@\n int a;\n-int b;\n+int c;\n");
  CHECK(files[2].path() == "fam/sp ace.in"); // the tab git writes after a spaced name is cut
  CHECK(files[2].hunks.ends_with("\\ No newline at end of file\n"));
  CHECK(files[3].path() == "fam/t.bin");
  CHECK(files[3].binary);
  CHECK(files[3].hunks.empty());
}

TEST_CASE("format-patch: the commit message and the signature are not sections") {
  auto files = parse_patch(read_file(fixture("patch/format_patch.patch")), "p");
  REQUIRE(files.size() == 1);
  CHECK(files[0].path() == "gemm_kernel.hpp");
  CHECK(files[0].line == 11);
  // Lines inside a hunk that look like headers belong to the hunk (its counts say so).
  CHECK(files[0].hunks == "@@ -1,3 +1,3 @@\n // kernel\n--- a removed line that looks like a "
                          "header\n+++ an added line that looks like a header\n // end\n");
}

TEST_CASE("diff -u: paths with and without a/ b/, dates cut") {
  auto files = parse_patch(read_file(fixture("patch/plain_diff_u.patch")), "p");
  REQUIRE(files.size() == 2);
  CHECK(files[0].old_path == "gemm_kernel.hpp.orig");
  CHECK(files[0].new_path == "gemm_kernel.hpp");
  CHECK(files[1].old_path == "instances/gemm_16x16x16.in");
  CHECK(files[1].new_path == "instances/gemm_16x16x16.in");
  CHECK(files[1].line == 6);
}

TEST_CASE("errors name the patch file and line") {
  REQUIRE_THROWS_WITH(parse_patch(read_file(fixture("patch/short_hunk.patch")), "short.patch"),
                      "short.patch:4: hunk ends early: expected 1 more old and 2 more new lines");
  REQUIRE_THROWS_WITH(
      parse_patch(read_file(fixture("patch/bad_header.patch")), "bad.patch"),
      "bad.patch:4: hunk header: expected '@@ -a,b +c,d @@', got '@@ -1,x +1,3 @@'");
  REQUIRE_THROWS_WITH(parse_patch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n?x\n", "q.patch"),
                      "q.patch:4: hunk line: expected ' ', '-', '+' or '\\', got '?x'");
  REQUIRE_THROWS_WITH(parse_patch("--- a/x\n+++ b/x\nno hunk\n", "q.patch"),
                      "q.patch:3: expected a hunk ('@@ -a,b +c,d @@') after the '+++' line");
}

TEST_CASE("a section rewritten for git apply under its family path") {
  auto files = parse_patch(read_file(fixture("patch/git_binary.patch")), "p");
  CHECK(kopt::candidate::rewrite_patch(files[1], "k.hpp") ==
        "diff --git a/k.hpp b/k.hpp\n--- a/k.hpp\n+++ b/k.hpp\n@@ -1,2 +1,2 @@\n int a;\n"
        "-int b;\n+int c;\n");
  CHECK(kopt::candidate::rewrite_patch(files[0], "instances/x.in")
            .starts_with("diff --git a/instances/x.in b/instances/x.in\nnew file mode 100644\n"
                         "--- /dev/null\n+++ b/instances/x.in\n@@ -0,0 +1 @@\n"));
}

TEST_CASE("generated folders") {
  using kopt::candidate::is_generated_path;
  CHECK(is_generated_path("build/x.o"));
  CHECK(is_generated_path("sub/CMakeFiles/y"));
  CHECK(is_generated_path("build-release/z"));
  CHECK(is_generated_path("__pycache__/m.pyc"));
  CHECK_FALSE(is_generated_path("gemm_kernel.hpp"));
  CHECK_FALSE(is_generated_path("builder.hpp"));
  CHECK_FALSE(is_generated_path("instances/gemm_16x16x16.in"));
}

TEST_SUITE_END();
