# Parallel agents on one family lose nothing: 8 `kopt record` and a `kopt bench` started at
# once, 20 times, with the real kopt, cmake, ninja and harness on a small host family. Each trial
# starts from the same ledger (the baseline); every record must land: the regression counter
# ends at 8 (which stops the ledger), attempts.jsonl counts 1..8 once each, and performance.md's
# Stop Summary says what state.json says and its Attempts table what attempts.jsonl says. Then a
# candidate identical to BEST is neither measured nor counted.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

export CCACHE_DIR=$WORK/ccache
family_src=$WORK/src/host_gemm
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
rm -rf "$family_src"/candidates/0[1-9]

# One instance and small shapes keep the 10 candidates cheap to build and to measure. Candidates
# 10-17 compute the product 3-10 times (slower by as much: regressions); 20 differs from 00 only
# by a comment (new code to the ledger, the same speed).
python3 - "$family_src" <<'EOF'
import json, os, sys
root = sys.argv[1]
spec = json.load(open(f"{root}/family.json"))
spec["instances"] = [{"TM": 32, "TN": 32, "TK": 32}]
spec.pop("heuristic")
spec["configs"] = "small.csv"
spec["bench"] = {"warmup": 1, "repeat": 5, "rounds": 4}
json.dump(spec, open(f"{root}/family.json", "w"), indent=2)
open(f"{root}/small.csv", "w").write("M,N,K\n16,64,64\n32,64,96\n64,96,64\n100,64,64\n"
                                      "256,64,64\n300,32,64\n")
kernel = open(f"{root}/gemm_kernel.hpp").read()
marker = "template <int TM, int TN, int TK> void gemm_tiled(const GemmArgs &g) {"
assert marker in kernel
for i, cid in enumerate(["10", "11", "12", "13", "14", "15", "16", "17", "20"]):
    os.makedirs(f"{root}/candidates/{cid}")
    slow = cid != "20"
    json.dump({"id": cid, "base": "00", "target": "global",
               "hypothesis": f"repeat the product {i + 3} times" if slow else "a comment"},
              open(f"{root}/candidates/{cid}/candidate.json", "w"))
    body = kernel
    if slow:
        body = kernel.replace(marker, f"template <int TM, int TN, int TK> void gemm_once(const GemmArgs &g);\n"
                              f"template <int TM, int TN, int TK> void gemm_tiled(const GemmArgs &g) {{\n"
                              f"  for (int r = 0; r < {i + 3}; ++r) gemm_once<TM, TN, TK>(g);\n}}\n"
                              f"template <int TM, int TN, int TK> void gemm_once(const GemmArgs &g) {{")
    open(f"{root}/candidates/{cid}/gemm_kernel.hpp", "w").write(body + ("" if slow else "// 20\n"))
EOF

b=$WORK/b
state=$b/kopt/host_gemm
ledger=$state/ledger
fam=(--spec "$family_src/family.json" --state-dir "$state")
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
ninja -C "$b" >"$WORK/build.log" || { cat "$WORK/build.log"; fail "build"; }

echo "--- the baseline is recorded; 10-17 are measured and decided: each a regression"
"$KOPT" bench "${fam[@]}" --candidate 00 >"$WORK/bench00.log" || { cat "$WORK/bench00.log"; fail "bench 00"; }
"$KOPT" decide "${fam[@]}" --candidate 00 >/dev/null || fail "decide 00"
"$KOPT" record "${fam[@]}" --candidate 00 >/dev/null || fail "record 00"
slow=(10 11 12 13 14 15 16 17)
for id in "${slow[@]}"; do
  "$KOPT" bench "${fam[@]}" --candidate "$id" >"$WORK/bench$id.log" || { cat "$WORK/bench$id.log"; fail "bench $id"; }
  if "$KOPT" decide --json "${fam[@]}" --candidate "$id" >"$WORK/decide$id.json"; then fail "$id was kept"; fi
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"]=="regression", d["verdict"]' \
    "$WORK/decide$id.json" || { cat "$WORK/decide$id.json"; fail "$id is not a regression"; }
done
mkdir "$WORK/start"
cp "$ledger"/state.json "$ledger"/performance.md "$ledger"/attempts.jsonl "$WORK/start/"

for trial in $(seq 1 20); do
  cp "$WORK/start"/* "$ledger/"
  pids=()
  for id in "${slow[@]}"; do
    "$KOPT" record "${fam[@]}" --candidate "$id" --max-consecutive 8 >"$WORK/record$id.log" 2>&1 &
    pids+=($!)
  done
  "$KOPT" bench --json "${fam[@]}" --candidate 20 >"$WORK/bench20.json" 2>"$WORK/bench20.log" &
  bench_pid=$!
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { cat "$WORK/record${slow[$i]}.log"; fail "trial $trial: record ${slow[$i]} failed"; }
  done
  wait $bench_pid || { cat "$WORK/bench20.log"; fail "trial $trial: bench 20 failed"; }
  python3 - "$ledger" "$state/results/20/measurement.json" <<'EOF' || fail "trial $trial: lost updates"
import json, sys
ledger, measurement = sys.argv[1], sys.argv[2]
state = json.load(open(f"{ledger}/state.json"))
attempts = [json.loads(line) for line in open(f"{ledger}/attempts.jsonl")]
performance = open(f"{ledger}/performance.md").read()
ids = [str(i) for i in range(10, 18)]
assert state["consecutive_regressions"] == 8, state["consecutive_regressions"]
assert state["stopped"] and state["stop_reason"] == "8 consecutive measured regressions", state
assert sorted(a["candidate"] for a in state["recorded"]) == ids, state["recorded"]
assert len(state["recent_regressions"]) == 5, state["recent_regressions"]
assert [a["kind"] for a in attempts] == ["baseline"] + ["attempt"] * 8, attempts
tried = attempts[1:]
assert sorted(a["candidate"] for a in tried) == ids, tried
assert sorted(a["consecutive_regressions"] for a in tried) == list(range(1, 9)), tried
assert [a["event"] for a in tried if a["event"]] == ["stopped"], tried
# performance.md is rendered from the final state: its Stop Summary and regression rows agree.
assert "## Stop Summary" in performance, performance
assert "- consecutive regressions: 8\n" in performance, performance
window = [r["candidate"] for r in state["recent_regressions"]]
rows = [line for line in performance.splitlines() if " vs 00 |" in line]
assert [row.split("|")[1].split()[0] for row in rows] == window, (rows, window)
# Its Attempts table is attempts.jsonl, row by row in the same order.
table = performance.split("\n## Attempts\n")[1].split("\n## ")[0]
listed = [line.split("|")[2].strip() for line in table.splitlines() if line.startswith("|")][2:]
assert listed == [a["candidate"] for a in attempts], (listed, attempts)
m = json.load(open(measurement))
assert m["status"] == "ok" and m["paired_best"] == "00", m
EOF
done

echo "--- a candidate identical to BEST: not measured, nothing recorded, the counter unchanged"
cp "$WORK/start"/* "$ledger/"
"$KOPT" record "${fam[@]}" --candidate 10 >/dev/null || fail "record 10"
mkdir "$family_src/candidates/21"
echo '{"id": "21", "base": "00", "hypothesis": "BEST again", "target": "global"}' \
  >"$family_src/candidates/21/candidate.json"
cp "$ledger/state.json" "$WORK/state-before.json"
cp "$ledger/attempts.jsonl" "$WORK/attempts-before.jsonl"
"$KOPT" bench "${fam[@]}" --candidate 21 --build-dir "$b" >"$WORK/bench21.log" 2>&1 ||
  { cat "$WORK/bench21.log"; fail "bench 21"; }
grep -q "candidate 21 is identical to BEST 00 (hash [0-9a-f]*): nothing to measure" "$WORK/bench21.log" ||
  { cat "$WORK/bench21.log"; fail "bench 21's answer"; }
[ ! -f "$state/results/21/measurement.json" ] || fail "21 was measured"
"$KOPT" decide "${fam[@]}" --candidate 21 >"$WORK/decide21.log" || true
grep -q "identical to BEST 00 (hash [0-9a-f]*): not measured as a change, not counted" "$WORK/decide21.log" ||
  { cat "$WORK/decide21.log"; fail "decide 21's answer"; }
"$KOPT" record "${fam[@]}" --candidate 21 >"$WORK/record21.log" || { cat "$WORK/record21.log"; fail "record 21"; }
grep -q "candidate 21 is identical to BEST 00: nothing recorded, regression counter unchanged" \
  "$WORK/record21.log" || { cat "$WORK/record21.log"; fail "record 21's answer"; }
cmp -s "$ledger/state.json" "$WORK/state-before.json" || fail "recording 21 changed state.json"
cmp -s "$ledger/attempts.jsonl" "$WORK/attempts-before.jsonl" || fail "recording 21 added an attempt"
grep -q '"consecutive_regressions": 1' "$ledger/state.json" || fail "the counter is not 10's 1"
echo "PASS"
