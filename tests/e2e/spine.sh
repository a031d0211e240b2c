# The spine, end to end with the real cmake, ninja, ccache and ctest on the host example, in
# phases that ctest runs in order as tests of their own (tests/e2e/CMakeLists.txt), sharing one
# folder, so that a failure names the behaviour that broke:
#   setup         a copy of the example with a candidate that aborts (04) and one that hangs (05)
#   keep          bench 01 through its build target; its keep test passes, verdict keep
#   correctness   00 and 01 pass, 02 fails naming its configs
#   record        recording 01's keep makes it BEST; its keep test stays green
#   regression    03 against BEST 01: regression (or tie), recorded with its per-class numbers
#   best_built    a new build folder continuing the ledger: 03's bench target builds BEST 01
#   crash_hang    04 and 05: verdict failed naming the abort and the timeout, 01 unaffected
#   noop_rebuild  a rebuild after touching nothing runs nothing
#   incremental   editing 03's kernel recompiles only 03's TUs
#   ccache_fresh  a fresh build folder of unchanged candidates: every object from ccache
#   ccache_copy   a new candidate folder identical to 01: its instances are ccache hits
#   rebase        a heuristic refresh in family.json changes BEST's hash: bench refuses BEST
#                 naming kopt rebase; after kopt rebase, 03's keep test runs beside BEST and
#                 records
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need ccache
phase=${1:?usage: spine.sh <phase>}

export CCACHE_DIR=$WORK/ccache # a cache of this test's own, so the counters are ours
family_src=$WORK/src/host_gemm
b1=$WORK/b1
state=$b1/kopt/host_gemm
kopt_family=(--spec "$family_src/family.json" --state-dir "$state")

setup() {
  rm -rf "${WORK:?}"/*
  mkdir -p "$WORK/src"
  cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
  # Two extra candidates that must fail without harming the others: one aborts, one hangs.
  python3 - "$family_src" <<'PY'
import json, os, sys
root = sys.argv[1]
spec = json.load(open(f"{root}/family.json"))
spec["timeout_s"] = 60
json.dump(spec, open(f"{root}/family.json", "w"), indent=2)
bodies = {"04": ("aborts in every kernel", "std::abort();"),
          "05": ("sleeps past the timeout", "std::this_thread::sleep_for(std::chrono::seconds(600));")}
for cid, (hypothesis, body) in bodies.items():
    os.makedirs(f"{root}/candidates/{cid}")
    json.dump({"id": cid, "base": "00", "hypothesis": hypothesis, "target": "global"},
              open(f"{root}/candidates/{cid}/candidate.json", "w"))
    open(f"{root}/candidates/{cid}/instance.cpp.in", "w").write(
        '#include "{{header}}"\n#include <chrono>\n#include <cstdlib>\n#include <thread>\n'
        'void {{symbol}}(const GemmArgs&) { ' + body + ' }\n')
PY
  cmake -S "$family_src" -B "$b1" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
}

keep() {
  cmake --build "$b1" --target candidate_01_bench >"$WORK/bench01.log" 2>&1 ||
    { cat "$WORK/bench01.log"; fail "candidate_01_bench"; }
  [ -f "$state/results/01/measurement.json" ] || fail "no measurement for 01"
  # The measurement names its build: the flags 01's instances were compiled with (Release).
  python3 - "$state/results/01/measurement.json" <<'PY' || fail "measurement.json names no build"
import json, sys
m = json.load(open(sys.argv[1]))
assert len(m["build"]) == 12, m["build"]
assert " -O3 " in m["build_flags"] + " " and "<candidate>" in m["build_flags"], m["build_flags"]
assert "/instances/" not in m["build_flags"] and " -o " not in m["build_flags"], m["build_flags"]
PY
  ctest --test-dir "$b1" -L keep -R '^candidate_01\.' --output-on-failure >"$WORK/keep01.log" 2>&1 ||
    { cat "$WORK/keep01.log"; fail "candidate_01.keep should pass"; }
  "$KOPT" decide "${kopt_family[@]}" --candidate 01 --json >"$WORK/decide01.json" || true
  expect_verdict "$WORK/decide01.json" keep
}

correctness() {
  ctest --test-dir "$b1" -L correctness -R '^candidate_0[01]\.' --output-on-failure \
    >"$WORK/correct.log" 2>&1 || { cat "$WORK/correct.log"; fail "00/01 correctness"; }
  if ctest --test-dir "$b1" -L correctness -R '^candidate_02\.' --output-on-failure \
    >"$WORK/wrong.log" 2>&1; then
    cat "$WORK/wrong.log"; fail "02 passed correctness"
  fi
  grep -q "configs have err != 0" "$WORK/wrong.log" || { cat "$WORK/wrong.log"; fail "no err listing"; }
  grep -Eq "M=[0-9]+,N=[0-9]+,K=[0-9]+: err" "$WORK/wrong.log" || fail "02's configs are not named"
}

record() {
  "$KOPT" record "${kopt_family[@]}" --candidate 01 >/dev/null
  expect_best 01
  grep -q "| 01 " "$state/ledger/performance.md" || fail "no row for 01 in performance.md"
  # BEST's own keep test stays green, though 01 was measured beside the BEST it replaced.
  ctest --test-dir "$b1" -L keep -R '^candidate_01\.' --output-on-failure >"$WORK/keep01best.log" 2>&1 ||
    { cat "$WORK/keep01best.log"; fail "BEST 01's keep test failed after its keep"; }
  expect_verdict "$state/results/01/decision.json" keep
  expect_reason "$state/results/01/decision.json" "candidate is BEST"
}

regression() {
  if ctest --test-dir "$b1" -L keep -R '^candidate_03\.' --output-on-failure >"$WORK/keep03.log" 2>&1; then
    cat "$WORK/keep03.log"; fail "candidate_03.keep passed"
  fi
  expect_verdict "$state/results/03/decision.json" regression tie
  "$KOPT" record "${kopt_family[@]}" --candidate 03 >/dev/null
  python3 - "$state/ledger/state.json" <<'PY' || fail "ledger after 03"
import json, sys
state = json.load(open(sys.argv[1]))
assert state["best"] == "01", state["best"]
assert state["consecutive_regressions"] == 1, state
summary = state["recent_regressions"][-1]
assert summary["candidate"] == "03", summary
assert summary["classes"], summary
PY
}

best_built() {
  # As when a ledger is restored into a new build folder: nothing is built there, and the bench
  # target of 03 must build BEST (01) beside 03 and the baseline, not fail for want of it.
  local b3=$WORK/b3
  rm -rf "$b3"
  mkdir -p "$b3/kopt/host_gemm"
  cp -r "$state/ledger" "$b3/kopt/host_gemm/"
  cmake -S "$family_src" -B "$b3" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release >"$WORK/configure3.log" || { cat "$WORK/configure3.log"; fail "configure b3"; }
  cmake --build "$b3" --target candidate_03_bench >"$WORK/bench03.log" 2>&1 ||
    { cat "$WORK/bench03.log"; fail "candidate_03_bench in a new folder did not build BEST 01"; }
  [ -x "$b3/kopt/host_gemm/bin/candidate_01" ] || fail "BEST 01 was not built"
  [ -f "$b3/kopt/host_gemm/results/03/measurement.json" ] || fail "03 was not measured"
  grep -q "BEST 01" "$WORK/bench03.log" || { cat "$WORK/bench03.log"; fail "03 was not measured beside BEST 01"; }
}

crash_hang() {
  local id
  for id in 04 05; do
    if ctest --test-dir "$b1" -L keep -R "^candidate_${id}\." --output-on-failure >"$WORK/keep$id.log" 2>&1; then
      cat "$WORK/keep$id.log"; fail "candidate_$id.keep passed"
    fi
    expect_verdict "$state/results/$id/decision.json" failed
  done
  expect_reason "$state/results/04/decision.json" "signal 6"
  expect_reason "$state/results/05/decision.json" "timed out after 60 s"
  # The crash ends the measurement in its first round, named among the rounds planned; the
  # .bench test that measured it fails (its decision written for kopt record), so the keep test
  # needing it is not run.
  local reason04
  reason04=$(json_get "$state/results/04/decision.json" reason)
  grep -Eq "round 1 of [2-9]" <<<"$reason04" ||
    fail "04: the crashed round is not named among the rounds planned: $reason04"
  for id in 04 05; do
    grep -Eq "candidate_$id\.bench .*\*\*\*Failed" "$WORK/keep$id.log" ||
      { cat "$WORK/keep$id.log"; fail "candidate_$id.bench did not fail"; }
    grep -Eq "candidate_$id\.keep .*Not Run" "$WORK/keep$id.log" ||
      { cat "$WORK/keep$id.log"; fail "candidate_$id.keep ran without its measurement"; }
  done
  ctest --test-dir "$b1" -L correctness -R '^candidate_01\.' >/dev/null || fail "01 harmed by 04/05"
}

noop_rebuild() {
  ninja -C "$b1" >/dev/null
  ninja -C "$b1" | grep "no work to do" >/dev/null || fail "a rebuild after touching nothing did work"
}

incremental() {
  echo "// an edit" >>"$family_src/candidates/03/gemm_kernel.hpp"
  ninja -C "$b1" >"$WORK/edit.log"
  grep "Building CXX object" "$WORK/edit.log" >"$WORK/edit-compiles.log" || fail "nothing recompiled"
  if grep -v "candidate_03.dir" "$WORK/edit-compiles.log"; then fail "other candidates recompiled"; fi
}

ccache_fresh() {
  ccache -z >/dev/null
  local b2=$WORK/b2
  cmake -S "$family_src" -B "$b2" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$b2" candidate_01 >/dev/null
  ccache --print-stats >"$WORK/stats.txt"
  local misses hits
  misses=$(awk '$1=="cache_miss"{print $2}' "$WORK/stats.txt")
  hits=$(awk '$1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{s+=$2} END{print s+0}' "$WORK/stats.txt")
  [ "$misses" -eq 0 ] || { cat "$WORK/stats.txt"; fail "$misses ccache misses in a fresh folder"; }
  [ "$hits" -gt 0 ] || fail "no ccache hits"
}

ccache_copy() {
  cp -r "$family_src/candidates/01" "$family_src/candidates/06"
  sed -i 's/"01"/"06"/' "$family_src/candidates/06/candidate.json"
  ccache -z >/dev/null
  cmake "$b1" >/dev/null
  ninja -C "$b1" candidate_06 >/dev/null
  ccache --print-stats >"$WORK/stats06.txt"
  local misses
  misses=$(awk '$1=="cache_miss"{print $2}' "$WORK/stats06.txt")
  [ "$misses" -eq 0 ] || { cat "$WORK/stats06.txt"; fail "$misses misses for a copy of 01"; }
}

rebase() {
  # A refreshed heuristic is in every candidate's content hash, BEST's included.
  local kept
  kept=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best_hash"])' "$state/ledger/state.json")
  python3 - "$family_src/family.json" <<'PY' || fail "the heuristic edit did not apply"
import json, sys
spec = json.load(open(sys.argv[1]))
first = spec["heuristic"]["rules"][0]["if"][0]
assert first[:2] == ["M*N", "<="], first
first[2] //= 2
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
  if "$KOPT" bench "${kopt_family[@]}" --candidate 03 >"$WORK/stale.log" 2>&1; then
    cat "$WORK/stale.log"; fail "bench ran beside a BEST whose content changed"
  fi
  grep -q "BEST 01's content changed since it was kept" "$WORK/stale.log" &&
    grep -q "kopt rebase --reason" "$WORK/stale.log" || { cat "$WORK/stale.log"; fail "the refusal does not name kopt rebase"; }
  "$KOPT" ls "${kopt_family[@]}" | grep -Eq '^01 .* BEST \(changed\) ' || { "$KOPT" ls "${kopt_family[@]}"; fail "kopt ls does not show BEST as changed"; }
  "$KOPT" ls "${kopt_family[@]}" --json | python3 -c 'import json, sys; r = {c["id"]: c for c in json.load(sys.stdin)}; assert r["01"]["changed"] and r["01"]["recorded"] == "BEST", r["01"]' ||
    fail "kopt ls --json: BEST 01 not changed"
  "$KOPT" rebase "${kopt_family[@]}" --reason "heuristic refreshed" >"$WORK/rebase.log" ||
    { cat "$WORK/rebase.log"; fail "kopt rebase"; }
  grep -q "^rebased BEST 01: content hash ${kept:0:8} -> " "$WORK/rebase.log" || { cat "$WORK/rebase.log"; fail "rebase message"; }
  "$KOPT" ls "${kopt_family[@]}" --json >"$WORK/ls.json"
  python3 - "$state/ledger" "$WORK/ls.json" "$kept" <<'PY' || fail "ledger after the rebase"
import json, sys
ledger, ls, kept = sys.argv[1:]
state = json.load(open(f"{ledger}/state.json"))
now = next(c["hash"] for c in json.load(open(ls)) if c["id"] == "01")
assert state["best"] == "01" and state["best_hash"] == now != kept, (state["best_hash"], now, kept)
assert not next(c for c in json.load(open(ls)) if c["id"] == "01")["changed"], "BEST still changed"
last = json.loads(open(f"{ledger}/attempts.jsonl").read().splitlines()[-1])
assert last["kind"] == "rebase" and last["from_hash"] == kept and last["hash"] == now, last
assert "rebase from " + kept[:8] + ": heuristic refreshed" in open(f"{ledger}/performance.md").read()
PY
  "$KOPT" rebase "${kopt_family[@]}" --reason "again" | grep -q "nothing to rebase" || fail "a second rebase changed something"
  "$KOPT" log "${kopt_family[@]}" | grep -q "rebased BEST 01 (hash ${kept:0:8} -> " || fail "kopt log does not show the rebase"
  # The keep test of 03 now runs beside BEST 01 under its new content, and records.
  if ctest --test-dir "$b1" -L keep -R '^candidate_03\.' --output-on-failure >"$WORK/keep03r.log" 2>&1; then
    cat "$WORK/keep03r.log"; fail "candidate_03.keep passed after the rebase"
  fi
  expect_verdict "$state/results/03/decision.json" regression tie
  "$KOPT" record "${kopt_family[@]}" --candidate 03 >"$WORK/record03r.log" || { cat "$WORK/record03r.log"; fail "record 03 after the rebase"; }
}

case $phase in
setup | keep | correctness | record | regression | best_built | crash_hang | noop_rebuild | incremental | \
  ccache_fresh | ccache_copy | rebase) "$phase" ;;
*) fail "unknown phase '$phase'" ;;
esac
echo "PASS"
