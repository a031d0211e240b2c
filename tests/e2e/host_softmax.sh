# The second host example (examples/host_softmax, not a GEMM), as a user runs it from its build
# folder with no --spec or --state-dir: the baseline round, 01 kept (about half the exps), 02
# incorrect (its sum one term short).
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

cmake -S "$KOPT_SOURCE_DIR/examples/host_softmax" -B "$WORK/b" -G Ninja \
  -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "configure"; }
cd "$WORK/b"
# The example's own folder holds no state: the state, ledger and results live in this build.
"$KOPT" round --id 00 --json >"$WORK/00.json" 2>"$WORK/00.log" || { cat "$WORK/00.log"; fail "round 00"; }
for id in 01 02; do
  "$KOPT" round --id $id --rounds 4 --json >"$WORK/$id.json" 2>"$WORK/$id.log" || true
done
python3 - "$WORK" <<'PY' || { cat "$WORK"/0[12].log; fail "verdicts"; }
import json, sys
w = sys.argv[1]
one, two = (json.load(open(f"{w}/{i}.json")) for i in ("01", "02"))
assert one["verdict"] == "keep", json.dumps(one, indent=1)[:2000]
assert all(c["change"] < -0.2 for c in one["classes"]), one["classes"]
assert two["verdict"] == "incorrect", json.dumps(two, indent=1)[:2000]
PY
echo "PASS"
