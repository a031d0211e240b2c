# What a user sees is what was measured, on the host example with the real cmake, ninja and ctest:
#   1. configs.csv gains a row after candidate 01's keep test: kopt ls says its measurement is
#      stale (naming the file), kopt decide refuses it, kopt status says BEST's row is of the old
#      configs, and `ctest -L keep -R candidate_01` measures again and decides on every config.
#   2. the build type changes in the same build folder (Release, then Debug): the keep test
#      measures both sides at -O0; its verdict names both builds, kopt record refuses it, and
#      with --allow-other-build the attempt's row names its build.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

copy_host_family
small_host_family
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm/candidates/01" "$family_src/candidates/"
host_family_with_baseline candidate_00 candidate_01
configs=$family_src/small.csv
decision=$state/results/01/decision.json
keep_test() { # log: the keep test of 01 as a user runs it (its fixtures measure when needed)
  ctest --test-dir "$b" -V -L keep -R '^candidate_01\.' >"$1" 2>&1 || true
  [ -f "$decision" ] || { cat "$1"; fail "the keep test wrote no decision"; }
}
classes_configs() { # the configs a decision's class rows count
  python3 -c 'import json, sys; print(sum(c["configs"] for c in json.load(open(sys.argv[1]))["classes"]))' "$1"
}

echo "--- 1. a configs row added after the measurement"
keep_test "$WORK/keep1.log"
[ "$(json_get "$decision" configs)" = 6 ] || fail "the first decision is not on 6 configs"
echo "1024,64,64" >>"$configs"

"$KOPT" ls "${kopt_family[@]}" --json >"$WORK/ls.json" || fail "kopt ls"
python3 - "$WORK/ls.json" <<'PY' || { cat "$WORK/ls.json"; fail "kopt ls shows the measurement as current"; }
import json, sys
row = next(r for r in json.load(open(sys.argv[1])) if r["id"] == "01")
assert row["measured"] == "stale", row
assert "small.csv changed since the measurement (6 configs measured, 7 now)" in row["stale"], row
PY
"$KOPT" ls "${kopt_family[@]}" >"$WORK/ls.txt" || fail "kopt ls"
grep -qE '^01 .* stale .*\(stale\)' "$WORK/ls.txt" || { cat "$WORK/ls.txt"; fail "kopt ls's table"; }

if "$KOPT" decide "${kopt_family[@]}" --candidate 01 >"$WORK/decide.log" 2>&1; then
  cat "$WORK/decide.log"
  fail "kopt decide decided on a measurement of 6 configs while small.csv holds 7"
fi
grep -q "measurement.json: small.csv changed since the measurement (6 configs measured, 7 now)" \
  "$WORK/decide.log" || { cat "$WORK/decide.log"; fail "kopt decide does not name small.csv"; }

"$KOPT" status "${kopt_family[@]}" >"$WORK/status.txt" || fail "kopt status"
grep -q "note: small.csv changed since BEST's row was measured (6 configs then, 7 now)" \
  "$WORK/status.txt" || { cat "$WORK/status.txt"; fail "kopt status shows BEST's row as current"; }

keep_test "$WORK/keep2.log"
grep -q "measurement up to date" "$WORK/keep2.log" &&
  { cat "$WORK/keep2.log"; fail "the keep test reused the measurement of 6 configs"; }
grep -q "measuring again: small.csv changed since the measurement" "$WORK/keep2.log" ||
  { cat "$WORK/keep2.log"; fail "the keep test does not say why it measures again"; }
[ "$(json_get "$decision" configs)" = 7 ] || fail "the decision is not on 7 configs"
[ "$(classes_configs "$decision")" = 7 ] || fail "the decision's classes do not count 7 configs"
grep -q "decided on 7 configs of small.csv (hash " "$WORK/keep2.log" ||
  { cat "$WORK/keep2.log"; fail "the printed verdict does not name its configs"; }
echo "ok: measured again, decided on 7 configs"

echo "--- 2. the build type changed in the same build folder: Debug"
cmake -S "$family_src" -B "$b" -DCMAKE_BUILD_TYPE=Debug >"$WORK/debug.log" 2>&1 ||
  { cat "$WORK/debug.log"; fail "configure Debug"; }
keep_test "$WORK/keep3.log"
expect_reason "$decision" "another build than BEST's row: candidate 01 measured build"
expect_reason "$decision" "(-O0"
expect_reason "$decision" "BEST 00 was recorded with build"
expect_reason "$decision" "(-O3)"
if "$KOPT" record "${kopt_family[@]}" --candidate 01 >"$WORK/record.log" 2>&1; then
  cat "$WORK/record.log"
  fail "kopt record recorded a -O0 measurement against BEST's -O3 row"
fi
grep -q "not recorded: candidate 01 measured build .*(-O0.*BEST 00 was recorded with build .*(-O3).*--allow-other-build" \
  "$WORK/record.log" || { cat "$WORK/record.log"; fail "the refusal does not name both builds"; }
attempts=$state/ledger/attempts.jsonl
[ "$(wc -l <"$attempts")" = 1 ] || fail "a refused record wrote to attempts.jsonl"
"$KOPT" record "${kopt_family[@]}" --candidate 01 --allow-other-build >"$WORK/record2.log" 2>&1 ||
  { cat "$WORK/record2.log"; fail "kopt record --allow-other-build"; }
python3 - "$attempts" <<'PY' || fail "the attempt's line does not name its build"
import json, sys
line = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert line["candidate"] == "01" and line["build"] and "-O3" not in line["build_flags"], line
assert "BEST 00 was recorded with build" in line["other_build"], line
assert line["configs"] == 7, line
PY
grep -qE "\(build [0-9a-f]+ \(-O0.*\), not BEST's\)" "$state/ledger/performance.md" ||
  { cat "$state/ledger/performance.md"; fail "performance.md's attempt row does not name its build"; }
echo "ok: the verdict names both builds, record refuses without --allow-other-build"
