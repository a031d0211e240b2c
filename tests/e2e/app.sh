# The application beside the kernel verdict, end to end on the host example with the real cmake,
# ninja and ctest: the family's own application (examples/host_gemm/app) is captured, its shapes
# and call counts become the configs, the keep test weighs them by traffic, and the application
# A/B (candidate_<id>_app, ctest -L app) sets the end-to-end change beside the prediction.
#   1. capture: candidate 00's application under KOPT_CAPTURE -> kopt capture merge -> configs
#   2. 01 against 00: the keep test (traffic rows in decision.json) and the application A/B,
#      whose change must agree with the prediction from the traffic rows (docs/KEEP.md)
#   3. kopt round --json of 01 carries the traffic rows; 01 becomes BEST
#   4. an A/A: 02 is BEST 01 plus a comment; its application A/B ties three times of three,
#      the first started while another process holds the host's device lock (it waits)
#   5. the report shows kernel verdict, traffic verdict and application A/B side by side
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

copy_host_family
rm -rf "$family_src"/candidates/0[2-9] "$family_src/agent"
# One instance (the default) keeps the builds short; the application's shapes are the configs.
python3 - "$family_src" <<'PY'
import json, sys
root = sys.argv[1]
spec = json.load(open(f"{root}/family.json"))
spec["instances"] = [{"TM": 32, "TN": 32, "TK": 32}]
spec.pop("heuristic")
spec["bench"] = {"warmup": 1, "repeat": 5, "rounds": 6}
# 30 side-by-side rounds of the application (0.13 s a run): on the 2-core machine one round's
# ratio spreads by about 4.5%, and with the default 10 one A/A of the three read "better" in CI.
spec["app"]["rounds"] = 30
json.dump(spec, open(f"{root}/family.json", "w"), indent=2)
PY
b=$WORK/b
state=$b/kopt/host_gemm
kopt_family=(--spec "$family_src/family.json" --state-dir "$state")

echo "--- 1. capture the application's shapes"
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=OFF >"$WORK/configure.log" ||
  { cat "$WORK/configure.log"; fail "configure"; }
cmake --build "$b" --target candidate_00_application >"$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log"; fail "build candidate_00_application"; }
KOPT_CAPTURE=$WORK/app.capture "$state/bin/app/candidate_00" --steps 12 --prefill 1 >"$WORK/app.out" ||
  fail "the application under KOPT_CAPTURE"
grep -q '^kopt-app-us: ' "$WORK/app.out" || fail "the application printed no kopt-app-us line"
"$KOPT" capture merge "$WORK/app.capture" --spec "$family_src/family.json" \
  --out "$family_src/app_configs.csv" || fail "capture merge"
cat "$family_src/app_configs.csv"
python3 - "$family_src" <<'PY'
import json, sys
root = sys.argv[1]
spec = json.load(open(f"{root}/family.json"))
spec["configs"] = "app_configs.csv"
spec["keep"] = {"weighting": "traffic"}
json.dump(spec, open(f"{root}/family.json", "w"), indent=2)
PY
host_family_with_baseline candidate_00 candidate_01

echo "--- 2. 01 against 00: the keep test, then the application A/B"
cmake --build "$b" --target candidate_01_bench >"$WORK/bench.log" 2>&1 ||
  { cat "$WORK/bench.log"; fail "candidate_01_bench"; }
ctest --test-dir "$b" -L keep -R '^candidate_01\.' >"$WORK/keep.log" 2>&1 ||
  { cat "$WORK/keep.log"; "$KOPT" decide "${kopt_family[@]}" --candidate 01; fail "01 not kept"; }
decision=$state/results/01/decision.json
"$KOPT" decide "${kopt_family[@]}" --candidate 01 | tee "$WORK/decide.txt" || true
[ "$(json_get "$decision" weighting)" = traffic ] || fail "decision.json: weighting is not traffic"
python3 - "$decision" <<'PY' || fail "decision.json's traffic rows"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["traffic"]
assert t["calls"] > 0, t
assert abs(sum(c["share"] for c in t["classes"]) - 1) < 1e-6, t["classes"]
o = t["overall"]
assert o["low"] <= o["change"] <= o["high"] and o["high"] < 0, o
assert [c["class"] for c in t["classes"]] == [c["class"] for c in d["classes"]]
PY
grep -q "the application's kernel time: -" "$WORK/decide.txt" || fail "kopt decide prints no traffic rows"

ctest --test-dir "$b" -L app -R '^candidate_01\.' >"$WORK/app_ab.log" 2>&1 ||
  { cat "$WORK/app_ab.log"; fail "the application A/B of 01 against 00 failed"; }
ab=$state/results/01/app.json
python3 - "$ab" "$decision" <<'PY' || { cat "$ab"; fail "app.json of 01 against 00"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok" and r["best"] == "00" and r["timed_by"] == "app", r
assert r["state"] == "better" and r["passes"], r
p = r["prediction"]
print(f"measured {100 * r['change']:+.2f}% [{100 * r['low']:+.2f}%, {100 * r['high']:+.2f}%], "
      f"predicted {100 * p['change']:+.2f}% (kernel share {100 * p['kernel_share']:.1f}%)")
assert p["inside_interval"] == (r["low"] <= p["change"] <= r["high"]), r
# The application's change lies between none and its kernel time's change (the traffic rows):
# the work around the kernels does not change. Where inside that range the prediction falls
# depends on the kernel share, BEST's kernel time from the keep test over its application time
# from the A/B, two measurements minutes apart. The harness times each shape warm and alone; in
# the application 00's GEMMs take ~6% longer (01's ~3%), and on a busy machine, where a
# neighbour's load slows BEST's memory-bound GEMMs during one of the two, by up to ~20%. The
# measured change agrees with the prediction within 25 points, and on a quiet machine within a
# few, on the faster side (docs/KEEP.md, "The prediction and the application").
kernel = json.load(open(sys.argv[2]))["traffic"]["overall"]
assert kernel["low"] - 0.02 <= r["low"] and r["high"] < 0, (kernel, r["low"], r["high"])
gap = r["change"] - p["change"]
print(f"measured - predicted = {100 * gap:+.2f} points; the kernel time's change "
      f"{100 * kernel['change']:+.2f}%")
assert p["inside_interval"] or abs(gap) < 0.25, f"measured - predicted = {100 * gap:+.2f} points"
PY

echo "--- 3. the round of 01 answers with its traffic rows"
"$KOPT" round "${kopt_family[@]}" --id 01 --build-dir "$b" --json >"$WORK/round.json" 2>"$WORK/round.err" ||
  { cat "$WORK/round.json" "$WORK/round.err"; fail "kopt round --id 01"; }
[ "$(json_get "$WORK/round.json" verdict)" = keep ] || fail "round: 01 not kept"
[ "$(json_get "$WORK/round.json" weighting)" = traffic ] || fail "round --json: no weighting"
json_get "$WORK/round.json" traffic overall high >/dev/null
expect_best 01

echo "--- 4. an A/A of the application: 02 is BEST 01 plus a comment"
cp -r "$family_src/candidates/01" "$family_src/candidates/02"
echo '{"id": "02", "base": "00", "hypothesis": "A/A: 01 plus a comment", "target": "global"}' \
  >"$family_src/candidates/02/candidate.json"
echo "// the same code as 01 under another content hash" >>"$family_src/candidates/02/gemm_kernel.hpp"
# The first A/A starts while another kopt process holds the host (the device locks of kopt
# round): it waits for it, and runs after.
export KOPT_DEVICE_LOCK_DIR=$WORK/device-locks
mkdir -p "$KOPT_DEVICE_LOCK_DIR"
flock "$KOPT_DEVICE_LOCK_DIR/host.lock" sleep 3 &
holder=$!
sleep 0.5
for i in 1 2 3; do
  cmake --build "$b" --target candidate_02_app >"$WORK/aa$i.log" 2>&1 ||
    { cat "$WORK/aa$i.log"; fail "A/A $i: candidate_02_app failed"; }
  grep "measured:" "$WORK/aa$i.log"
  [ "$(json_get "$state/results/02/app.json" state)" = tie ] ||
    { cat "$WORK/aa$i.log"; fail "A/A $i: the application A/B did not tie"; }
  [ "$(json_get "$state/results/02/app.json" best)" = 01 ] || fail "A/A $i: not against BEST 01"
done
wait "$holder"
# One number per quantity: the sides' times printed are geomeans over the rounds, whose ratio is
# the change the interval is centred on, in app.json and in the text.
python3 - "$state/results/02/app.json" "$WORK/aa3.log" <<'PY' || fail "A/A: the times and the change disagree"
import json, re, sys
r = json.load(open(sys.argv[1]))
ratio = r["candidate_geomean_us"] / r["best_geomean_us"] - 1
assert abs(ratio - r["change"]) < 1e-9, (ratio, r["change"])
assert r["low"] <= r["change"] <= r["high"] and r["passes"], r
text = open(sys.argv[2]).read()
best, cand = map(float, re.search(r"BEST 01: ([0-9.]+) us; candidate 02: ([0-9.]+) us", text).groups())
measured = float(re.search(r"measured: +([-+][0-9.]+)%", text).group(1))
assert abs(100 * (cand / best - 1) - measured) < 0.01 + 100 * 0.1 / best, (best, cand, measured)
assert re.search(r"app: pass \(the application's change is within [0-9.]+%: " + re.escape("%+.2f%%" % measured), text), text
PY
grep -q "kopt: waiting for $KOPT_DEVICE_LOCK_DIR/host.lock" "$WORK/aa1.log" ||
  { cat "$WORK/aa1.log"; fail "the first A/A did not wait for the host's lock"; }
! grep -q "kopt: waiting for" "$WORK/aa2.log" || fail "the second A/A waited: a lock left held"

echo "--- 5. cheats: a candidate's code in the application's process prints the time"
# 03 prints a second, smaller time at exit; 04 sends the application's line to /dev/null and
# prints a made-up one: one line, but the runs' wall times show no saving.
mkdir -p "$family_src/candidates/03" "$family_src/candidates/04"
for id in 03 04; do
  echo '{"id": "'$id'", "base": "01", "hypothesis": "a cheat on the application A/B", "target": "global"}' \
    >"$family_src/candidates/$id/candidate.json"
  cp "$family_src/candidates/01/gemm_kernel.hpp" "$family_src/candidates/$id/"
done
cat >>"$family_src/candidates/03/gemm_kernel.hpp" <<'CPP'
#include <cstdio>
struct KoptSecondTime {
  ~KoptSecondTime() { std::printf("kopt-app-us: 1.0\n"); }
};
inline KoptSecondTime kopt_second_time;
CPP
cat >>"$family_src/candidates/04/gemm_kernel.hpp" <<'CPP'
#include <cstdio>
#include <unistd.h>
struct KoptFakeTime {
  int saved = dup(1);
  KoptFakeTime() { std::fflush(stdout); (void)std::freopen("/dev/null", "w", stdout); }
  ~KoptFakeTime() { dprintf(saved, "kopt-app-us: 1000.0\n"); }
};
inline KoptFakeTime kopt_fake_time;
CPP
for id in 03 04; do
  cmake --build "$b" --target "candidate_${id}_app" >"$WORK/cheat$id.log" 2>&1 &&
    { cat "$WORK/cheat$id.log"; fail "cheat $id: its application A/B passed"; }
  [ "$(json_get "$state/results/$id/app.json" status)" = failed ] ||
    { cat "$WORK/cheat$id.log"; fail "cheat $id: the A/B did not fail"; }
  json_get "$state/results/$id/app.json" reason
done
grep -q "printed 2 kopt-app-us: lines" "$state/results/03/app.json" || fail "cheat 03: not named"
grep -q "do not agree with its runs' wall times" "$state/results/04/app.json" ||
  fail "cheat 04: not named"

echo "--- 5b. a candidate whose application leaves a process running, holding its stdout"
# 05's code starts a daemon at exit (a session of its own, stdout inherited): the run ends when
# the application exits, not at app.timeout_s (300 s here), the daemon is killed and named, and
# the A/B fails.
mkdir -p "$family_src/candidates/05"
echo '{"id": "05", "base": "01", "hypothesis": "leaves a daemon", "target": "global"}' \
  >"$family_src/candidates/05/candidate.json"
cp "$family_src/candidates/01/gemm_kernel.hpp" "$family_src/candidates/05/"
cat >>"$family_src/candidates/05/gemm_kernel.hpp" <<'CPP'
#include <cstdio>
#include <unistd.h>
struct KoptDaemon {
  ~KoptDaemon() {
    std::fflush(stdout);
    if (fork() == 0) {
      setsid();
      sleep(600);
      _exit(0);
    }
  }
};
inline KoptDaemon kopt_daemon;
CPP
cmake --build "$b" --target candidate_05_application >"$WORK/daemon_build.log" 2>&1 ||
  { cat "$WORK/daemon_build.log"; fail "build candidate_05_application"; }
started=$SECONDS
"$KOPT" app "${kopt_family[@]}" --candidate 05 >"$WORK/daemon.log" 2>&1 &&
  { cat "$WORK/daemon.log"; fail "daemon 05: its application A/B passed"; }
took=$((SECONDS - started))
cat "$WORK/daemon.log"
[ "$took" -lt 100 ] || fail "daemon 05: the A/B took $took s: it waited for the daemon's stdout"
grep -q "candidate 05's application left 1 process(es) running after it exited (killed: [0-9]* (candidate_05))" \
  "$state/results/05/app.json" || fail "daemon 05: the process left running is not named"
! pgrep -f "$state/bin/app/candidate_05" >/dev/null || fail "daemon 05: its daemon still runs"

echo "--- 5c. an incorrect candidate's application A/B fails, whatever its times"
# 06 is 01 with every output off by one: its keep test measurement finds it
# incorrect, and `ctest -L app` (which measures it first) fails without timing an A/B.
mkdir -p "$family_src/candidates/06"
echo '{"id": "06", "base": "01", "hypothesis": "wrong by one", "target": "global"}' \
  >"$family_src/candidates/06/candidate.json"
cp "$family_src/candidates/01/gemm_kernel.hpp" "$family_src/candidates/06/"
python3 - "$family_src/candidates/06/gemm_kernel.hpp" <<'PY' || fail "06: cannot break its kernel"
import re, sys
p = sys.argv[1]
s = open(p).read()
# The store of C's element: add one to it.
new, n = re.subn(r"(C\[[^\]]+\]\s*=\s*)([^;]+);", r"\1(\2) + 1.0f;", s, count=1)
assert n == 1, "no store of C found"
open(p, "w").write(new)
PY
cmake "$b" >/dev/null 2>&1 || fail "reconfigure for 06"
ctest --test-dir "$b" -L app -R '^candidate_06\.' >"$WORK/wrong_ab.log" 2>&1 &&
  { cat "$WORK/wrong_ab.log"; fail "incorrect 06: its application A/B passed"; }
[ "$(json_get "$state/results/06/app.json" status)" = failed ] || fail "incorrect 06: the A/B did not fail"
json_get "$state/results/06/app.json" reason | tee "$WORK/wrong_reason.txt"
grep -q "^an A/B of wrong code is no pass: candidate 06's keep test measurement (.*): incorrect: 10 of 10 configs" "$WORK/wrong_reason.txt" ||
  fail "incorrect 06: the reason does not name its incorrect measurement"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['best_us'] == [], r" \
  "$state/results/06/app.json" || fail "incorrect 06: the A/B ran its application"

echo "--- 6. the report sets the three verdicts side by side"
"$KOPT" report "${kopt_family[@]}" --out "$WORK/report.html" >/dev/null || fail "kopt report"
grep -q "traffic" "$WORK/report.html" || fail "the report has no traffic verdict"
grep -q "application" "$WORK/report.html" || fail "the report has no application A/B"
echo "app: ok"
