# A side effect of known size that favours one side of the keep test, on a one-class family:
# host_spin (each kernel spins a set time) cut to one config class, candidate 04 its baseline's
# code under another content hash, and KOPT_TEST_FIRST_SIDE_SLOWER=0.003 making every time of
# the side that goes first in round 1 0.3% longer. Six decisions in a row through the user's flow
# (`candidate_04_bench`, `ctest -L keep`, `kopt record`): the arrangements alternate, the 0.3%
# shows on the side that started first in the first decision, each later measurement pools the
# earlier ones' rounds (looks 1 to 6), so the pooled change, three measurements of each
# arrangement, comes back towards zero; no decision is a keep or a regression.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

family_src=$WORK/src/host_spin
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_spin" "$family_src"
rm -rf "$family_src"/candidates/0[1235]
python3 - "$family_src/family.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["classes"] = {"columns": ["us"], "buckets": {"us": [1000000]}}  # one class
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
host_family_with_baseline all

export KOPT_TEST_FIRST_SIDE_SLOWER=0.003
first_change="" pending=0
for i in 1 2 3 4 5 6; do
  echo "--- decision $i"
  cmake --build "$b" --target candidate_04_bench >"$WORK/bench.log" 2>&1 ||
    { cat "$WORK/bench.log"; fail "candidate_04_bench (decision $i)"; }
  if ctest --test-dir "$b" -L keep -R '^candidate_04\.' >"$WORK/keep.log" 2>&1; then
    cat "$WORK/keep.log"; fail "decision $i: the keep test passed: a side effect was kept"
  fi
  decision=$state/results/04/decision.json
  "$KOPT" decide "${kopt_family[@]}" --candidate 04 || true
  expect_verdict "$decision" tie
  arrangement=$(json_get "$decision" arrangement)
  want=$([ $((i % 2)) = 1 ] && echo best-first || echo candidate-first)
  [ "$arrangement" = "$want" ] || fail "decision $i was measured $arrangement, expected $want"
  change=$(json_get "$decision" overall change)
  [ -n "$first_change" ] || first_change=$change
  looks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("looks", 1))' \
    "$state/results/04/measurement.json")
  [ "$looks" = "$i" ] || fail "decision $i pools $looks measurements, expected $i"
  echo "decision $i: $arrangement, $looks pooled, overall change $change"
  [ "$(json_get "$decision" classes 0 pending)" = true ] && pending=$((pending + 1))
  "$KOPT" record "${kopt_family[@]}" --candidate 04 >"$WORK/record.log" 2>&1 ||
    { cat "$WORK/record.log"; fail "record (decision $i)"; }
done
echo "first change $first_change, pooled over six $change; pending (interval off zero): $pending"
# The hook's 0.3% is seen first (best-first: the candidate looks faster), and the six pooled
# measurements, three of each arrangement, carry it on both sides alike.
python3 - "$first_change" "$change" <<'PY' || fail "the side effect did not show first, or did not cancel"
import sys
first, pooled = map(float, sys.argv[1:3])
assert first < 0, first
assert abs(pooled) < 0.002, pooled
PY
[ "$(json_get "$state/ledger/state.json" consecutive_regressions)" = 0 ] ||
  fail "the regression counter moved"
