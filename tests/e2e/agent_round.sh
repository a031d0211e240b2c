# The agent's loop on the host family, with the real kopt, git, cmake, ninja and harness: the
# example driver (examples/host_gemm/agent/run.sh) turns 4 prepared patches into candidates and
# runs one `kopt round --json` each: one faster (keep), one wrong (incorrect, repair 1 of 3) and
# one slower (regression); the fourth makes the first one's content again, which `kopt new`
# refuses, naming candidate 11 (two candidates of one content would be measured twice). Then 4
# rounds started at once: every one lands in the ledger, and no two benchmarks held the host at
# the same time. Then, in a configured but unbuilt folder, rounds build what they need; a candidate
# that does not compile fails at the build step with a one-line reason.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need git
need python3
export KOPT_DEVICE_LOCK_DIR=$WORK/device-locks

copy_host_family
small_host_family
host_family_with_baseline candidate_00

echo "--- the driver: 4 prepared patches, one round each"
KOPT=$KOPT bash "$KOPT_SOURCE_DIR/examples/host_gemm/agent/run.sh" --spec "$family_src/family.json" \
  --state-dir "$state" --build-dir "$b" --out "$WORK/agent" >"$WORK/driver.log" 2>"$WORK/driver.err" ||
  { cat "$WORK/driver.log" "$WORK/driver.err" "$WORK"/agent/*.log; fail "the driver"; }
cat "$WORK/driver.log"
python3 - "$WORK/agent" <<'PY' || { cat "$WORK"/agent/*.log; fail "the driver's verdicts"; }
import json, sys
out = sys.argv[1]
r = {i: json.load(open(f"{out}/round-{i}.json")) for i in ("11", "12", "13")}
def check(cond, what, j):
    assert cond, f"{what}: {json.dumps(j, indent=1)[:3000]}"
k = r["11"]
check(k["verdict"] == "keep" and k["exit_code"] == 0 and k["best"] == "11", "11 keep", k)
check(k["classes"] and all("low" in c and "high" in c for c in k["classes"]), "11's intervals", k)
check(k["next"]["action"] == "propose" and k["next"]["base"] == "11", "11's next", k)
# The decision's notes, each a line ("other processes used ..% of this machine's CPU time" when
# the test command's other tests kept the machine busy): there, whatever they say.
check(all(isinstance(x["notes"], list) and all(isinstance(n, str) for n in x["notes"])
          for x in r.values()), "the answers' notes", k)
w = r["12"]
check(w["verdict"] == "incorrect" and w["exit_code"] == 3, "12 incorrect", w)
check(w["repair"] == {"proposal": "12", "attempt": 1, "of": 3, "abandoned": False}, "12's repair", w)
check(w["incorrect"] and w["next"]["action"] == "repair" and w["next"]["attempt"] == 2, "12's next", w)
s = r["13"]
check(s["verdict"] == "regression" and s["exit_code"] == 1, "13 regression", s)
check(s["regressions"] == {"consecutive": 1, "max": 5, "counted": True}, "13's counter", s)
check(not s["stopped"] and s["best_before"] == "11", "13's stop state", s)
import os
assert not os.path.exists(f"{out}/round-14.json"), "a round ran for the refused fourth patch"
PY
grep -q "^4-faster-again: not proposed: .*equals candidate 11's content" "$WORK/driver.log" ||
  fail "the driver's line for the refused fourth patch"
grep -q "^12 2-wrong: incorrect (repair 1 of 3), exit 3" "$WORK/driver.log" || fail "the driver's line for 12"

echo "--- 4 rounds started at once: 4 ledger entries, one benchmark on the host at a time"
ledger=$state/ledger
lines_before=$(wc -l <"$ledger/attempts.jsonl")
for i in 1 2 3 4; do
  mkdir -p "$WORK/v$i/a" "$WORK/v$i/b"
  cp "$family_src/candidates/11/gemm_kernel.hpp" "$WORK/v$i/a/gemm_kernel.hpp"
  { cat "$family_src/candidates/11/gemm_kernel.hpp"; echo "// variant $i"; } >"$WORK/v$i/b/gemm_kernel.hpp"
  (cd "$WORK/v$i" && diff -u a/gemm_kernel.hpp b/gemm_kernel.hpp >"$WORK/v$i.patch") || true
  "$KOPT" new "${kopt_family[@]}" --id "2$i" --base 11 --from-patch "$WORK/v$i.patch" \
    --hypothesis "a comment ($i)" >/dev/null || fail "new 2$i"
done
pids=()
for i in 1 2 3 4; do
  "$KOPT" round --json "${kopt_family[@]}" --id "2$i" --build-dir "$b" --max-consecutive 20 \
    >"$WORK/par$i.json" 2>"$WORK/par$i.log" &
  pids+=($!)
done
for i in 1 2 3 4; do
  rc=0
  wait "${pids[$((i - 1))]}" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 1 ] || { cat "$WORK/par$i.log" "$WORK/par$i.json"; fail "round 2$i exited $rc"; }
done
python3 - "$WORK" "$ledger" "$lines_before" <<'PY' || { cat "$WORK"/par*.log; fail "parallel rounds"; }
import json, sys
work, ledger, before = sys.argv[1], sys.argv[2], int(sys.argv[3])
rounds = [json.load(open(f"{work}/par{i}.json")) for i in (1, 2, 3, 4)]
attempts = [json.loads(line) for line in open(f"{ledger}/attempts.jsonl")]
new = attempts[before:]
assert sorted(a["candidate"] for a in new) == ["21", "22", "23", "24"], new
assert all(a["kind"] == "attempt" for a in new), new
state = json.load(open(f"{ledger}/state.json"))
for r in rounds:
    assert r["record"]["outcome"] == "recorded", r
    assert r["verdict"] in ("keep", "tie", "regression", "split"), r
# The host is one device: the four benchmarks held it one after the other.
spans = sorted((r["device"]["from"], r["device"]["to"]) for r in rounds)
assert all(r["device"]["slot"] == "host" for r in rounds), rounds
assert all(r["device"]["device"] for r in rounds), [r["device"] for r in rounds]  # the CPU's model
for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
    assert a1 <= b0, f"two benchmarks overlapped: {spans}"
print("spans", [(round(a - spans[0][0], 2), round(b - spans[0][0], 2)) for a, b in spans])
PY

echo "--- rounds without --build-dir in a configured, unbuilt folder: built, and a good candidate kept"
b2=$WORK/b2
cmake -S "$family_src" -B "$b2" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=OFF >"$WORK/configure2.log" ||
  { cat "$WORK/configure2.log"; fail "configure b2"; }
fam2=(--spec "$family_src/family.json" --state-dir "$b2/kopt/host_gemm")
"$KOPT" round --json "${fam2[@]}" --id 00 >"$WORK/b2-00.json" 2>"$WORK/b2-00.log" ||
  { cat "$WORK/b2-00.log" "$WORK/b2-00.json"; fail "the baseline round in an unbuilt folder"; }
rc=0
"$KOPT" round --json "${fam2[@]}" --id 11 >"$WORK/b2-11.json" 2>"$WORK/b2-11.log" || rc=$?
python3 - "$WORK/b2-11.json" <<'PY' || { cat "$WORK/b2-11.log"; fail "11 in an unbuilt folder"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "keep" and r["exit_code"] == 0, json.dumps(r, indent=1)[:2000]
PY
[ $rc -eq 0 ] || fail "round 11 exited $rc"
grep -q "kopt round: building candidate_00, candidate_11" "$WORK/b2-11.log" ||
  { cat "$WORK/b2-11.log"; fail "round 11 did not build"; }

echo "--- the text answer of a round: the per-class table, then the verdict and the next step"
mkdir -p "$family_src/candidates/12"
cp "$family_src/candidates/11/"*.hpp "$family_src/candidates/12/"
echo "// 11 under another content hash" >>"$family_src/candidates/12/gemm_kernel.hpp"
echo '{"id": "12", "base": "00", "hypothesis": "A/A of 11", "target": "global"}' \
  >"$family_src/candidates/12/candidate.json"
"$KOPT" round "${fam2[@]}" --id 12 >"$WORK/b2-12.txt" 2>"$WORK/b2-12.log" || true
grep -Eq "^class +configs +best us +cand us +ratio +change" "$WORK/b2-12.txt" &&
  grep -Eq "^overall +[0-9]+ " "$WORK/b2-12.txt" && grep -q "^candidate 12: " "$WORK/b2-12.txt" &&
  grep -q "^next: " "$WORK/b2-12.txt" ||
  { cat "$WORK/b2-12.txt" "$WORK/b2-12.log"; fail "round 12's text has no per-class table"; }

echo "--- a candidate that does not compile: failed at the build step, its reason one line"
{ cat "$family_src/candidates/11/gemm_kernel.hpp"; echo "this is not C++;"; } >"$WORK/broken.hpp"
(cd "$WORK" && cp "$family_src/candidates/11/gemm_kernel.hpp" a.hpp && cp broken.hpp b.hpp &&
  diff -u a.hpp b.hpp | sed 's|^--- a.hpp.*|--- a/gemm_kernel.hpp|; s|^+++ b.hpp.*|+++ b/gemm_kernel.hpp|' >broken.patch) || true
"$KOPT" new "${fam2[@]}" --id 31 --base 11 --from-patch "$WORK/broken.patch" --hypothesis "broken" >/dev/null ||
  fail "new 31"
rc=0
"$KOPT" round --json "${fam2[@]}" --id 31 >"$WORK/b2-31.json" 2>"$WORK/b2-31.log" || rc=$?
[ $rc -eq 4 ] || { cat "$WORK/b2-31.log" "$WORK/b2-31.json"; fail "round 31 exited $rc, not 4"; }
python3 - "$WORK/b2-31.json" <<'PY' || fail "31's answer"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "failed" and r["failed_step"] == "build", r
assert "\n" not in r["reason"] and "error" in r["reason"] and "gemm_kernel.hpp" in r["reason"], r["reason"]
assert r["log"] and len(r["log"].splitlines()) > 1, r["log"]
assert r["winning"] == [], r
PY
echo "PASS"
