# What the user edits is what gets built and measured, and what the compiler names: with the
# real kopt, cmake, ninja, ccache and g++ on the host example.
# - A built and benched candidate's base changes in candidate.json: its bench target re-configures,
#   recompiles and measures the new content, and kopt check passes.
# - A JSON error in candidate.json fails the configure step before anything compiles.
# - A compile error in a candidate's own copy of the kernel header is reported at that copy's
#   path and line, not at the generated copy's.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need ccache
need python3

export CCACHE_DIR=$WORK/ccache
family_src=$WORK/src/host_gemm
mkdir -p "$WORK/src" "$family_src/candidates/08"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm/." "$family_src"
# 08 has its own instance template (a comment more) and takes the kernel header from its base.
echo '{"id": "08", "base": "01", "hypothesis": "a template of its own", "target": "global"}' \
  >"$family_src/candidates/08/candidate.json"
{ cat "$family_src/instance.cpp.in"; echo "// 08's own"; } >"$family_src/candidates/08/instance.cpp.in"
b=$WORK/b
state=$b/kopt/host_gemm
fam=(--spec "$family_src/family.json" --state-dir "$state")
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
measured_hash() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$1"; }

echo "--- 08 (base 01) built and benched"
cmake --build "$b" --target candidate_08_bench >"$WORK/bench1.log" 2>&1 || { cat "$WORK/bench1.log"; fail "bench 08"; }
before=$(measured_hash "$state/results/08/measurement.json")
[ "$before" = "$(cat "$state/gen/08/kopt_hash.txt")" ] || fail "08's first measurement is not of 08"

echo "--- 08's base becomes 00: the bench target re-configures, recompiles 08, measures 00's code"
sed -i 's/"base": "01"/"base": "00"/' "$family_src/candidates/08/candidate.json"
cmake --build "$b" --target candidate_08_bench >"$WORK/bench2.log" 2>&1 || { cat "$WORK/bench2.log"; fail "bench 08 again"; }
grep -q "Re-running CMake" "$WORK/bench2.log" || { cat "$WORK/bench2.log"; fail "the edit did not re-configure"; }
grep -q "Building CXX object CMakeFiles/candidate_08.dir" "$WORK/bench2.log" ||
  { cat "$WORK/bench2.log"; fail "08 was not recompiled"; }
after=$(measured_hash "$state/results/08/measurement.json")
[ "$after" != "$before" ] || fail "08 was measured with its old content (hash $after)"
[ "$after" = "$(cat "$state/gen/08/kopt_hash.txt")" ] || fail "08's measurement is not of its current content"
cmp -s "$state/gen/08/src/gemm_kernel.hpp" "$family_src/gemm_kernel.hpp" || fail "08 does not build 00's kernel"
"$KOPT" check "${fam[@]}" --candidate 08 --build-dir "$b" >"$WORK/check.log" 2>&1 ||
  { cat "$WORK/check.log"; fail "kopt check 08"; }
grep -q "candidate 08: correct" "$WORK/check.log" || { cat "$WORK/check.log"; fail "check's verdict"; }

echo "--- a trailing comma in candidate.json: the configure step fails naming file:line:col, 0 compiles"
echo '// a change that would need compiles' >>"$family_src/gemm_kernel.hpp"
echo '{"id": "08", "base": "00", "target": "global",}' >"$family_src/candidates/08/candidate.json"
if cmake --build "$b" --target candidate_08_bench >"$WORK/bad.log" 2>&1; then
  cat "$WORK/bad.log"; fail "a malformed candidate.json built"
fi
# (CMake wraps the message: the file:line:col and the parser's words may sit on two lines.)
grep -q "candidates/08/candidate.json:1:[0-9]*:" "$WORK/bad.log" && grep -q "invalid JSON" "$WORK/bad.log" ||
  { cat "$WORK/bad.log"; fail "the error does not name file:line:col"; }
if grep "Building CXX object" "$WORK/bad.log"; then fail "compiled before the JSON error"; fi
echo '{"id": "08", "base": "00", "target": "global"}' >"$family_src/candidates/08/candidate.json"

echo "--- a compile error in 09's copy of the header names that copy and its line"
mkdir "$family_src/candidates/09"
echo '{"id": "09", "base": "00", "hypothesis": "a typo", "target": "global"}' \
  >"$family_src/candidates/09/candidate.json"
cp "$family_src/gemm_kernel.hpp" "$family_src/candidates/09/gemm_kernel.hpp"
line=$(grep -n "acc += g.A" "$family_src/candidates/09/gemm_kernel.hpp" | cut -d: -f1)
sed -i "${line}s/acc += g.A/acc += g.Q/" "$family_src/candidates/09/gemm_kernel.hpp"
cmake "$b" >/dev/null || fail "re-configure with 09"
if cmake --build "$b" --target candidate_09 >"$WORK/error.log" 2>&1; then fail "09 compiled"; fi
grep -q "^$family_src/candidates/09/gemm_kernel.hpp:$line:[0-9]*: error" "$WORK/error.log" ||
  { cat "$WORK/error.log"; fail "the error does not name candidates/09/gemm_kernel.hpp:$line"; }
if grep -E "(src|gen/09)/gemm_kernel.hpp" "$WORK/error.log" | grep -v "^FAILED\|^\[" | grep -v "$family_src/candidates"; then
  fail "the generated copy is named"
fi
echo "PASS"
