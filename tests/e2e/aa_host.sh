# An A/A on the host example through the user's flow: candidate 90 is the baseline 00 plus one
# comment line (the same code under another content hash), decided against BEST 00 three times
# (`cmake --build --target candidate_90_bench`, then `ctest -L keep`). Under the paired rule
# no decision may be a keep, a regression or a failure, and the regression counter stays 0.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

family_src=$WORK/src/host_gemm
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
mkdir -p "$family_src/candidates/90"
echo '{"id": "90", "base": "00", "hypothesis": "A/A: the baseline plus one comment", "target": "global"}' \
  >"$family_src/candidates/90/candidate.json"
{ cat "$family_src/gemm_kernel.hpp"; echo "// A/A: a comment changes the content hash, not the code"; } \
  >"$family_src/candidates/90/gemm_kernel.hpp"

b=$WORK/b
state=$b/kopt/host_gemm
kopt_family=(--spec "$family_src/family.json" --state-dir "$state")
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=OFF >"$WORK/configure.log" ||
  { cat "$WORK/configure.log"; fail "configure"; }
cmake --build "$b" --target candidate_00 candidate_90 >"$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log"; fail "build"; }
{ "$KOPT" bench "${kopt_family[@]}" --best && "$KOPT" decide "${kopt_family[@]}" --candidate 00 &&
    "$KOPT" record "${kopt_family[@]}" --candidate 00; } >"$WORK/best.log" 2>&1 ||
  { cat "$WORK/best.log"; fail "recording the baseline"; }

for i in 1 2 3; do
  echo "--- A/A decision $i"
  cmake --build "$b" --target candidate_90_bench >"$WORK/bench.log" 2>&1 ||
    { cat "$WORK/bench.log"; fail "candidate_90_bench (decision $i)"; }
  if ctest --test-dir "$b" -L keep -R '^candidate_90\.' >"$WORK/keep.log" 2>&1; then
    cat "$WORK/keep.log"; fail "the keep test passed: an A/A was kept (decision $i)"
  fi
  "$KOPT" decide "${kopt_family[@]}" --candidate 90 >"$WORK/decide.log" 2>&1 || true
  cat "$WORK/decide.log"
  verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' \
    "$state/results/90/decision.json")
  case $verdict in
  keep | regression | failed | incorrect) fail "A/A decision $i: $verdict" ;;
  esac
  grep -q "paired" "$state/results/90/decision.json" || fail "decision $i is not side by side"
  "$KOPT" record "${kopt_family[@]}" --candidate 90 >"$WORK/record.log" 2>&1 ||
    { cat "$WORK/record.log"; fail "record (decision $i)"; }
done
grep -Eq '"consecutive_regressions": *0' "$state/ledger/state.json" ||
  { cat "$state/ledger/state.json"; fail "the regression counter moved"; }
grep -Eq '"best": *"00"' "$state/ledger/state.json" || fail "BEST is no longer 00"
