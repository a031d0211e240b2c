# Several hosts: a family's LAUNCHER (here a stand-in for `srun --gres=gpu:1` that records its
# calls) is put in front of every harness run: the bench target, the .bench, .golden,
# and .correctness tests. A launcher that fails fails the test.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

family_src=$WORK/src/host_gemm
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
cat >"$WORK/fake-srun" <<'SH'
#!/usr/bin/env bash
# Records "<its options> | <the command>" and runs the command, as srun would on a node.
opts=()
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do opts+=("$1"); shift; done
if [ -n "${FAKE_SRUN_REFUSE:-}" ]; then
  echo "srun: error: Unable to allocate resources: Requested node configuration is not available" >&2
  exit 1
fi
echo "${opts[*]} | $*" >>"$FAKE_SRUN_LOG"
exec "$@"
SH
chmod +x "$WORK/fake-srun"
export FAKE_SRUN_LOG=$WORK/calls.log
: >"$FAKE_SRUN_LOG"
sed -i "s|kopt_add_family(host_gemm SPEC \([^)]*\))|kopt_add_family(host_gemm SPEC \1 LAUNCHER $WORK/fake-srun --gres=gpu:1)|" \
  "$family_src/CMakeLists.txt"
grep -q "LAUNCHER" "$family_src/CMakeLists.txt" || fail "could not add LAUNCHER to the copy"

b=$WORK/b
state=$b/kopt/host_gemm
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "configure"; }

echo "--- the bench target runs kopt bench through the launcher"
cmake --build "$b" --target candidate_01_bench >"$WORK/bench.log" 2>&1 ||
  { cat "$WORK/bench.log"; fail "candidate_01_bench"; }
[ -f "$state/results/01/measurement.json" ] || fail "no measurement for 01"
grep -q "^--gres=gpu:1 | .*kopt bench --spec $family_src/family.json --state-dir $state --candidate 01 --identity-dir $b$" \
  "$FAKE_SRUN_LOG" || { cat "$FAKE_SRUN_LOG"; fail "the bench target did not go through the launcher"; }

echo "--- the keep and correctness tests: golden, bench and check, all launched"
: >"$FAKE_SRUN_LOG"
ctest --test-dir "$b" -R '^candidate_01\.(keep|correctness)$' --output-on-failure \
  >"$WORK/ctest.log" 2>&1 || { cat "$WORK/ctest.log"; fail "01's keep/correctness tests"; }
for expected in "bench .* --golden-only$" "bench .* --candidate 01 --decide-failed --reuse --identity-dir [^ ]*$" \
                "check .* --candidate 01 --build-dir $b$"; do
  grep -Eq "^--gres=gpu:1 \| .*kopt $expected" "$FAKE_SRUN_LOG" ||
    { cat "$FAKE_SRUN_LOG"; fail "no launched call matching '$expected'"; }
done
[ "$(grep -vc "^--gres=gpu:1 | " "$FAKE_SRUN_LOG")" -eq 0 ] || fail "a call without the options"

echo "--- a launcher that cannot allocate fails the bench test with its message"
if FAKE_SRUN_REFUSE=1 ctest --test-dir "$b" -R '^candidate_02\.bench$' -FA '.*' \
  --output-on-failure >"$WORK/refused.log" 2>&1; then
  cat "$WORK/refused.log"; fail "the bench test passed although the launcher refused"
fi
grep -q "srun: error: Unable to allocate resources" "$WORK/refused.log" || fail "launcher's error lost"
echo "PASS"
