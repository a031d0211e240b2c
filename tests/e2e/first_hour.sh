# A new user's first hour, as the README tells it: `kopt init` makes a family in a project of
# their own that sets no build type; the baseline, a candidate made from an edit of the kernel and
# its verdict follow, every kopt command run from the build folder with neither --spec nor
# --state-dir. The instances compile optimised, and measurement.json names the build.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

p=$WORK/project
mkdir -p "$p"

echo "--- kopt init: the family's files, and what to do next"
(cd "$p" && "$KOPT" init kernels/axpy >"$WORK/init.txt") || { cat "$WORK/init.txt"; fail "init"; }
for f in family.json axpy_kernel.hpp instance.cpp.in harness.cpp configs.csv CMakeLists.txt \
  candidates/00/candidate.json; do
  [ -f "$p/kernels/axpy/$f" ] || fail "init wrote no $f"
done
echo "--- a second init there keeps every file (nothing written, the files named)"
cp "$p/kernels/axpy/harness.cpp" "$WORK/harness.before"
echo "// mine" >>"$p/kernels/axpy/harness.cpp"
if (cd "$p" && "$KOPT" init kernels/axpy >"$WORK/again.txt" 2>&1); then fail "init over a family"; fi
grep -q "kernels/axpy/harness.cpp.* already there: nothing was written" "$WORK/again.txt" ||
  { cat "$WORK/again.txt"; fail "second init's message"; }
tail -1 "$p/kernels/axpy/harness.cpp" | grep -q "// mine" || fail "init overwrote the user's edit"
cp "$WORK/harness.before" "$p/kernels/axpy/harness.cpp"

echo "--- the printed next steps, followed as printed: the lines for the project's CMakeLists.txt"
# Printed lines between two headings, without the two spaces before each.
printed() { # first heading, next heading
  sed -n "/^$1/,/^$2/p" "$WORK/init.txt" | sed '1d;$d' | sed 's/^  //'
}
printed "Next, add to your project's CMakeLists.txt" "then, from your project's folder:" >"$WORK/add.txt"
grep -qx "enable_testing()" "$WORK/add.txt" || { cat "$WORK/init.txt"; fail "no enable_testing() to add"; }
printf 'cmake_minimum_required(VERSION 3.25)\nproject(mine LANGUAGES CXX)\n' >"$p/CMakeLists.txt"
cat "$WORK/add.txt" >>"$p/CMakeLists.txt"
printed "then, from your project's folder:" "Or configure" >"$WORK/steps.txt"
grep -q "^cmake -S \. -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKernelOpt_DIR=$(realpath "$KOPT_PACKAGE_DIR")\$" "$WORK/steps.txt" ||
  { cat "$WORK/steps.txt"; fail "the configure step names no KernelOpt_DIR of this kopt"; }
# The edit of the kernel that the `kopt new` step names as change.diff (in the build folder).
cp "$p/kernels/axpy/axpy_kernel.hpp" "$WORK/edited.hpp"
sed -i 's/^template <int UNROLL> void axpy_kernel/\/\/ The loop, unrolled by the compiler too.\ntemplate <int UNROLL> void axpy_kernel/' "$WORK/edited.hpp"
(cd "$p/kernels/axpy" && diff -u axpy_kernel.hpp "$WORK/edited.hpp" | sed "s|$WORK/edited.hpp|axpy_kernel.hpp|") \
  >"$WORK/change.diff" || true
[ -s "$WORK/change.diff" ] || fail "the edit made no patch"

export PATH="$(dirname "$KOPT"):$PATH"
cd "$p"
n=0
while IFS= read -r step <&3; do
  n=$((n + 1))
  echo "\$ $step"
  [ "$step" = "cd build" ] && { cd build; cp "$WORK/change.diff" change.diff; continue; }
  rc=0
  eval "$step" >"$WORK/step$n.txt" 2>&1 </dev/null || rc=$?
  # A round ends 1 when its candidate is not kept (tie, regression): a verdict all the same.
  if [ $rc -ne 0 ] && ! { [[ "$step" == "kopt round --id 01"* ]] && [ $rc -eq 1 ]; }; then
    cat "$WORK/step$n.txt"
    fail "the printed step '$step' exited $rc"
  fi
  case "$step" in
  cmake*)
    # The printed configure sets a build type (no build type is e2e.build_type's).
    ! grep -q "CMAKE_BUILD_TYPE is not set" "$WORK/step$n.txt" ||
      { cat "$WORK/step$n.txt"; fail "the printed configure sets no build type"; } ;;
  "kopt round --id 00"*)
    "$KOPT" status >"$WORK/status.txt" || { cat "$WORK/status.txt"; fail "status"; }
    grep -q "BEST: 00 " "$WORK/status.txt" || { cat "$WORK/status.txt"; fail "00 is not BEST"; }
    grep -q "build [0-9a-f]\{12\} (-O3)" "$WORK/status.txt" ||
      { cat "$WORK/status.txt"; fail "status names no -O3 build"; }
    python3 - kopt/axpy/results/00/measurement.json <<'PY' || fail "measurement.json names no optimised build"
import json, sys
m = json.load(open(sys.argv[1]))
assert len(m["build"]) == 12 and " -O3" in m["build_flags"], (m["build"], m["build_flags"])
PY
    ;;
  ctest*)
    grep -q "candidate_00.correctness" "$WORK/step$n.txt" && grep -q "candidate_01.correctness" "$WORK/step$n.txt" &&
      grep -q "100% tests passed" "$WORK/step$n.txt" ||
      { cat "$WORK/step$n.txt"; fail "ctest as printed runs no correctness test"; } ;;
  esac
done 3<"$WORK/steps.txt"
[ "$n" -ge 6 ] || fail "only $n printed steps"
python3 - kopt/axpy/results/01/decision.json <<'PY' || fail "no verdict for 01"
import json, sys
d = json.load(open(sys.argv[1]))
# A timed verdict of any kind: on a loaded 2-core machine a split is as likely as a tie.
assert d["verdict"] in ("keep", "tie", "regression", "split"), d
PY

echo "--- docs/HARNESS.md's flow by hand, as printed there: a folder written by hand, then record"
mkdir -p ../kernels/axpy/candidates/02
cp ../kernels/axpy/axpy_kernel.hpp ../kernels/axpy/candidates/02/
echo "// 02: the baseline's code under another content hash" >>../kernels/axpy/candidates/02/axpy_kernel.hpp
echo '{"id": "02", "base": "00", "hypothesis": "by hand", "target": "global"}' \
  >../kernels/axpy/candidates/02/candidate.json
sed -n '/The same by hand/,/^Nothing becomes BEST/p' "$KOPT_SOURCE_DIR/docs/HARNESS.md" |
  grep '^    ' | sed 's/^    //; s/ *#.*$//' >"$WORK/by_hand.txt"
[ "$(wc -l <"$WORK/by_hand.txt")" -eq 4 ] || { cat "$WORK/by_hand.txt"; fail "HARNESS.md's flow by hand"; }
while IFS= read -r step <&3; do
  echo "\$ $step"
  rc=0
  eval "$step" >"$WORK/hand.txt" 2>&1 </dev/null || rc=$?
  # The keep test fails unless 02 is kept: a verdict all the same, recorded next.
  [ $rc -eq 0 ] || [[ "$step" == "ctest -L keep"* ]] || { cat "$WORK/hand.txt"; fail "'$step' exited $rc"; }
done 3<"$WORK/by_hand.txt"
grep -q "^02 " "$WORK/hand.txt" ||
  { cat "$WORK/hand.txt"; fail "kopt record --candidate 02 recorded nothing"; }
"$KOPT" log >"$WORK/log.txt" || fail "log"
grep -q "01" "$WORK/log.txt" && grep -q "  02  " "$WORK/log.txt" ||
  { cat "$WORK/log.txt"; fail "01 or 02 not in the log"; }
"$KOPT" report >"$WORK/report.txt" || { cat "$WORK/report.txt"; fail "report"; }
[ -s kopt/axpy/report.html ] || fail "no report at the state folder"

echo "--- a wrong --state-dir is told apart from an empty ledger"
if "$KOPT" status --spec ../kernels/axpy/family.json --state-dir "$p" >"$WORK/wrong.txt" 2>&1; then
  fail "status with the project folder as state"
fi
grep -q "not a family's state folder" "$WORK/wrong.txt" || { cat "$WORK/wrong.txt"; fail "wrong folder message"; }
if command -v nvcc >/dev/null 2>&1; then
  echo "--- kopt init --backend cuda: a project of its own that configures and builds with nvcc"
  cd "$WORK"
  "$KOPT" init vadd --backend cuda >"$WORK/init_cuda.txt" || { cat "$WORK/init_cuda.txt"; fail "init cuda"; }
  cmake -S vadd -B vadd-build -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" >"$WORK/cuda.log" 2>&1 &&
    cmake --build vadd-build --target candidate_00 >>"$WORK/cuda.log" 2>&1 ||
    { tail -30 "$WORK/cuda.log"; fail "the cuda scaffold does not build"; }
fi
if command -v hipcc >/dev/null 2>&1; then
  echo "--- kopt init --backend hip: configures and builds with hipcc as the C++ compiler"
  cd "$WORK"
  "$KOPT" init hadd --backend hip --arch gfx90a >"$WORK/init_hip.txt" || { cat "$WORK/init_hip.txt"; fail "init hip"; }
  grep -q '"arch": "gfx90a"' hadd/family.json || fail "the hip family names no arch"
  cmake -S hadd -B hadd-build -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" >"$WORK/hip.log" 2>&1 &&
    cmake --build hadd-build --target candidate_00 >>"$WORK/hip.log" 2>&1 ||
    { tail -30 "$WORK/hip.log"; fail "the hip scaffold does not build"; }
fi
echo "PASS"
