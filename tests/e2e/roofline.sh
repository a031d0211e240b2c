# The plausibility gate on the host example, through the user's flow: the small host family
# declares the bytes and flops of each config (family.json `roofline`) and a peak for any device.
# Candidate 01 is an A/A (00 plus a comment). With a peak of 1 kB/s every real time is
# impossible: `kopt decide` of 01 refuses it (verdict failed, exit 1), naming the configs of
# both sides and the figure, and its keep test fails. With a peak no CPU reaches, 00 is recorded
# as BEST and 01 decided (any verdict on times) with each class's fraction of the limit printed
# and kept in decision.json; recorded, the report page shows the fractions too.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

copy_host_family
small_host_family
b=$WORK/b
state=$b/kopt/host_gemm
kopt_family=(--spec "$family_src/family.json" --state-dir "$state")
mkdir -p "$family_src/candidates/01"
echo '{"id": "01", "base": "00", "hypothesis": "A/A: 00 plus a comment", "target": "global"}' \
  >"$family_src/candidates/01/candidate.json"
{ cat "$family_src/gemm_kernel.hpp"; echo "// A/A: a comment changes the content hash, not the code"; } \
  >"$family_src/candidates/01/gemm_kernel.hpp"

set_peak() { # bytes_per_s flops_per_s
  python3 - "$family_src/family.json" "$1" "$2" <<'PY'
import json, sys
path, bytes_per_s, flops_per_s = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
spec = json.load(open(path))
spec["roofline"] = {"bytes": "4*(M*K + K*N + M*N)", "flops": "2*M*N*K",
                    "peaks": [{"device": "*", "bytes_per_s": bytes_per_s,
                               "flops_per_s": flops_per_s}]}
json.dump(spec, open(path, "w"), indent=2)
PY
}

# Measures candidate 01 beside BEST (its bench target) and decides it: the decision's JSON in
# $WORK/$1.json, decide's text in $WORK/$1.txt; returns decide's exit status.
bench_and_decide() { # name
  cmake --build "$b" --target candidate_01_bench >"$WORK/$1.bench.log" 2>&1 ||
    { cat "$WORK/$1.bench.log"; fail "candidate_01_bench ($1)"; }
  local rc=0
  "$KOPT" decide "${kopt_family[@]}" --candidate 01 >"$WORK/$1.txt" 2>&1 || rc=$?
  cat "$WORK/$1.txt"
  cp "$state/results/01/decision.json" "$WORK/$1.json"
  return $rc
}

echo "--- a peak of 1 kB/s: every time is impossible"
set_peak 1e3 1e18
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=OFF >"$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; fail "configure"; }
rc=0
bench_and_decide impossible || rc=$?
[ "$rc" = 1 ] || fail "kopt decide exited $rc on an impossible measurement, expected 1"
expect_verdict "$WORK/impossible.json" failed
expect_reason "$WORK/impossible.json" "impossible time: candidate 01 ran 6 configs faster than"
expect_reason "$WORK/impossible.json" "M=16,N=256,K=256 in "
expect_reason "$WORK/impossible.json" " us of moving its 294.9 kB at 1 kB/s"
expect_reason "$WORK/impossible.json" "; BEST 00 ran 6 configs faster than"
expect_reason "$WORK/impossible.json" "(family.json roofline.peaks[0])"
grep -q "^verdict: failed (impossible time: " "$WORK/impossible.txt" || fail "decide printed no refusal"
grep -q "^speed of light on " "$WORK/impossible.txt" || fail "decide printed no speed of light"
if ctest --test-dir "$b" -L keep -R '^candidate_01\.' --output-on-failure >"$WORK/keep.log" 2>&1; then
  cat "$WORK/keep.log"; fail "the keep test passed on an impossible measurement"
fi
grep -q "impossible time" "$WORK/keep.log" || { cat "$WORK/keep.log"; fail "the keep test's log"; }

echo "--- a peak no CPU reaches: decided, with each class's fraction"
set_peak 1e15 1e18 # family.json is part of every content hash: both are built again
cmake --build "$b" --target candidate_00 candidate_01 >"$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log"; fail "building 00 and 01 again"; }
{ "$KOPT" bench "${kopt_family[@]}" --best && "$KOPT" decide "${kopt_family[@]}" --candidate 00 &&
    "$KOPT" record "${kopt_family[@]}" --candidate 00; } >"$WORK/best.log" 2>&1 ||
  { cat "$WORK/best.log"; fail "recording the baseline under a plausible roofline"; }
bench_and_decide plausible || true
expect_verdict "$WORK/plausible.json" tie keep regression split
python3 - "$WORK/plausible.json" "$WORK/plausible.txt" <<'PY' || fail "the speed of light"
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
light = d["speed_of_light"]
assert light["missing"] == "" and light["peak"] == "1 PB/s, 1000 PFLOP/s (family.json roofline.peaks[0])", light
rows = {r["class"]: r for r in light["classes"]}
classes = [r["class"] for r in d["classes"]]
assert list(rows) == classes + ["overall"], (list(rows), classes)
assert rows["overall"]["configs"] == 6, rows["overall"]
for r in light["classes"]:
    assert 0 < r["candidate_fraction"] < 1 and 0 < r["best_fraction"] < 1, r
    # decide's table: the class, its configs, its limit and both fractions in percent
    number = r"([0-9.]+(?:e[-+][0-9]+)?)"
    line = re.search(r"^%s +%d +%s +%s%% +%s%%$" % (re.escape(r["class"]), r["configs"], number, number, number),
                     text, re.M)
    assert line, (r, text)
    for got, want in ((line.group(1), r["limit_us"]), (line.group(2), 100 * r["best_fraction"]),
                      (line.group(3), 100 * r["candidate_fraction"])):
        assert abs(float(got) / want - 1) < 0.01, (got, want, text)
print("speed of light per class:", {c: "%.3g%%" % (100 * r["candidate_fraction"]) for c, r in rows.items()})
PY
"$KOPT" record "${kopt_family[@]}" --candidate 01 >"$WORK/record_01.log" 2>&1 ||
  { cat "$WORK/record_01.log"; fail "record 01"; }
"$KOPT" report "${kopt_family[@]}" --out "$WORK/report.html" >"$WORK/report.log" 2>&1 ||
  { cat "$WORK/report.log"; fail "kopt report"; }
grep -q "Speed of light on .*: M&lt;64 " "$WORK/report.html" ||
  { grep -o "Speed of light[^<]*" "$WORK/report.html"; fail "the report shows no speed of light"; }
echo "roofline: an impossible time refused naming its configs; fractions printed per class"
