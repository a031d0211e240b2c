# An A/A on the host example through the user's flow: candidate 70 is BEST 01 plus one comment
# line (the same code under another content hash), decided against BEST 01 three times
# (`cmake --build --target candidate_70_bench`, then `ctest -L keep`). Under the paired rule
# no decision may be a keep, a regression or a failure, and the regression counter stays 0.
# Every harness run of a decision runs on one CPU (a host family's runs are pinned). A fourth
# decision, made while every CPU is kept busy by another process, judges no class better or worse
# (within 10% on a busy machine) and says that the machine was busy.
# It runs in e2e.cheats_setup's folder (KOPT_E2E_WORK), where 70 is built and 01 is BEST.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

family_src=$WORK/src/host_gemm
b=$WORK/b
state=$b/kopt/host_gemm
kopt_family=(--spec "$family_src/family.json" --state-dir "$state")
[ -d "$family_src/candidates/70" ] || fail "no candidate 70 in $WORK: e2e.cheats_setup runs first"
expect_best 01
counter=$(json_get "$state/ledger/state.json" consecutive_regressions)

for i in 1 2 3; do
  echo "--- A/A decision $i"
  cmake --build "$b" --target candidate_70_bench >"$WORK/bench.log" 2>&1 ||
    { cat "$WORK/bench.log"; fail "candidate_70_bench (decision $i)"; }
  if ctest --test-dir "$b" -L keep -R '^candidate_70\.' >"$WORK/keep.log" 2>&1; then
    cat "$WORK/keep.log"; fail "the keep test passed: an A/A was kept (decision $i)"
  fi
  "$KOPT" decide "${kopt_family[@]}" --candidate 70 >"$WORK/decide.log" 2>&1 || true
  cat "$WORK/decide.log"
  expect_verdict "$state/results/70/decision.json" tie split
  [ "$(json_get "$state/results/70/decision.json" method)" = paired ] ||
    fail "decision $i is not side by side"
  # Every run of both sides on one CPU, named in its log: one CPU per log, the same in all.
  logs=("$state"/results/70/rounds/*/harness.log)
  cpus=$(sed -n 's/^# exited with 0, .* s, on CPU \([0-9]*\)\(, confined .*\)\{0,1\}$/\1/p' "${logs[@]}")
  [ "${#logs[@]}" -ge 4 ] && [ "$(echo "$cpus" | wc -l)" = "${#logs[@]}" ] &&
    [ "$(echo "$cpus" | sort -u | wc -l)" = 1 ] ||
    { head -2 "${logs[@]}"; fail "decision $i: the runs are not pinned to one CPU"; }
  "$KOPT" record "${kopt_family[@]}" --candidate 70 >"$WORK/record.log" 2>&1 ||
    { cat "$WORK/record.log"; fail "record (decision $i)"; }
done
echo "--- one more, with every CPU kept busy by another process: no class judged within 10%"
# Not recorded: under this load the times move either way; no class counts within 10%.
busy=()
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  busy+=($!)
done
rc=0
"$KOPT" bench "${kopt_family[@]}" --candidate 70 --rounds 2 >"$WORK/busy_bench.log" 2>&1 || rc=$?
kill "${busy[@]}"
wait "${busy[@]}" 2>/dev/null || true
[ $rc -eq 0 ] || { cat "$WORK/busy_bench.log"; fail "kopt bench under load exited $rc"; }
"$KOPT" decide "${kopt_family[@]}" --candidate 70 >"$WORK/busy_decide.log" 2>&1 || true
cat "$WORK/busy_decide.log"
python3 - "$state/results/70" <<'PY' || fail "the busy machine is not in the measurement and its decision"
import json, sys
m = json.load(open(sys.argv[1] + "/measurement.json"))
d = json.load(open(sys.argv[1] + "/decision.json"))
assert m["others_cpu"] >= 0.25, m.get("others_cpu")
assert any("of this machine's CPU time while the rounds ran" in n for n in d["notes"]), d["notes"]
assert all(c["state"] == "tie" for c in d["classes"]), [(c["state"], c["low"], c["high"]) for c in d["classes"]]
assert d["verdict"] not in ("keep", "split", "regression"), d["verdict"]
PY
grep -q "^note: other processes used [0-9]*% of this machine's CPU time" "$WORK/busy_decide.log" ||
  fail "kopt decide printed no note of the busy machine"
[ "$(json_get "$state/ledger/state.json" consecutive_regressions)" = "$counter" ] ||
  { cat "$state/ledger/state.json"; fail "the regression counter moved"; }
expect_best 01
