# Tuned tables and heuristics end to end on the host example, with the real cmake, ninja and
# harness: kopt tune (resumable), heuristic fit and eval, then gen-instances with the tuned table
# + the fitted heuristic and compile=dispatch: the manifest compiles exactly tuned + heuristic
# + default. Wave features: fit through the CLI, and a family whose rules test a fill and a ratio
# of wave counts builds and dispatches as the rules say.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

family_src=$WORK/src/host_gemm
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
b=$WORK/b
state=$b/kopt/host_gemm
fam=(--spec "$family_src/family.json" --state-dir "$state")
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
kernels=gemm_16x64x64,gemm_32x32x32,gemm_64x64x64,gemm_32x64x32

echo "--- golden, then tune two kernels; a second run adds two more and skips what is there"
"$KOPT" bench "${fam[@]}" --golden-only --build-dir "$b" >/dev/null || fail "golden"
"$KOPT" tune "${fam[@]}" --build-dir "$b" --kernels gemm_16x64x64,gemm_32x32x32 --chunk 5 \
  --repeat 3 --warmup 0 >"$WORK/tune1.log" || { cat "$WORK/tune1.log"; fail "tune 1"; }
full=$state/tune/00/full.csv
configs=$(($(wc -l <"$family_src/configs.csv") - 1))
[ "$(($(wc -l <"$full") - 1))" -eq $((2 * configs)) ] || fail "full.csv after run 1: $(wc -l <"$full")"
"$KOPT" tune --json "${fam[@]}" --kernels "$kernels" --repeat 3 --warmup 0 >"$WORK/tune2.json" ||
  { cat "$WORK/tune2.json"; fail "tune 2"; }
python3 - "$WORK/tune2.json" "$full" "$state/tune/00/tuned.csv" "$configs" <<'PY' || fail "tune results"
import csv, json, sys
report = json.load(open(sys.argv[1]))
n = int(sys.argv[4])
assert report["reused"] == 2 * n and report["measured"] == 2 * n, report
assert report["remeasured"] == 0 and report["stale"] == [], report
assert report["arch"] == "host" and report["compute_units"] > 0, report
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 4 * n, len(rows)
assert all(r["err"] == "0" for r in rows), "the golden was compared: err must be 0"
tuned = list(csv.DictReader(open(sys.argv[3])))
assert list(tuned[0].keys()) == "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio".split(","), tuned[0].keys()
assert all(t["gfx"] == "host" and t["cu_num"] == str(report["compute_units"]) for t in tuned), tuned[0]
assert all(r["hash"] == report["hash"] and r["warmup"] == "0" and r["repeat"] == "3" for r in rows), rows[0]
assert all(r["profiler"] == "chrono" and r["device"] and r["arch"] == "host" for r in rows), rows[0]
assert len(tuned) == n, len(tuned)
for t in tuned:
    mine = [float(r["us"]) for r in rows if (r["M"], r["N"], r["K"]) == (t["M"], t["N"], t["K"])]
    assert float(t["us"]) == min(mine), (t, mine)
PY

echo "--- the candidate's kernel edited after the tune: every row of it is measured again"
echo "// an edit after the tune" >>"$family_src/gemm_kernel.hpp"
"$KOPT" tune --json "${fam[@]}" --build-dir "$b" --kernels "$kernels" --repeat 3 --warmup 0 \
  >"$WORK/tune3.json" 2>"$WORK/tune3.log" || { cat "$WORK/tune3.log"; fail "tune 3"; }
python3 - "$WORK/tune2.json" "$WORK/tune3.json" "$full" "$configs" <<'PY' || fail "re-measure after an edit"
import csv, json, sys
before, after = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n = int(sys.argv[4])
assert after["hash"] != before["hash"], after
assert after["reused"] == 0 and after["measured"] == 4 * n and after["remeasured"] == 4 * n, after
reason = f"measured with content hash {before['hash'][:8]}, the candidate's is now {after['hash'][:8]}"
assert after["stale"] == [{"reason": reason, "rows": 4 * n}], after["stale"]
rows = list(csv.DictReader(open(sys.argv[3])))
assert len(rows) == 4 * n and all(r["hash"] == after["hash"] for r in rows), rows[0]
PY
"$KOPT" tune "${fam[@]}" --kernels "$kernels" --repeat 3 --warmup 0 >"$WORK/tune4.log" 2>&1 ||
  { cat "$WORK/tune4.log"; fail "tune 4"; }
grep -q "measured 0 rows, reused $((4 * configs)) from" "$WORK/tune4.log" || { cat "$WORK/tune4.log"; fail "tune 4 re-measured"; }

echo "--- rows of another device are not mixed into one tuned table"
cp "$full" "$WORK/full.csv.orig"
python3 - "$full" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["kernel"] == "gemm_64x64x64":
        r["device"], r["compute_units"] = "Another CPU", "96"
w = csv.DictWriter(open(sys.argv[1], "w"), fieldnames=list(rows[0].keys()), lineterminator="\n")
w.writeheader()
w.writerows(rows)
PY
if "$KOPT" tune "${fam[@]}" --kernels gemm_16x64x64 --repeat 3 --warmup 0 >"$WORK/tune5.log" 2>&1; then
  fail "a tuned table of two devices was written"
fi
grep -q "full.csv: rows measured on two devices: '.*' (host, [0-9]* compute units) (line 2) and 'Another CPU' (host, 96 compute units)" \
  "$WORK/tune5.log" || { cat "$WORK/tune5.log"; fail "the refusal does not name both devices"; }
cp "$WORK/full.csv.orig" "$full"

echo "--- fit, eval (also with a holdout), malformed input"
"$KOPT" heuristic fit --results "$full" --out "$WORK/heuristic.json" --max-arms 3 >"$WORK/fit.log" ||
  { cat "$WORK/fit.log"; fail "fit"; }
"$KOPT" heuristic eval --results "$full" --heuristic "$WORK/heuristic.json" --spec "$family_src/family.json" \
  --json >"$WORK/eval.json" || fail "eval"
python3 - "$WORK/eval.json" "$configs" <<'PY' || fail "eval json"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["shapes"] == int(sys.argv[2]), e
assert 1 <= e["geomean_slowdown"] <= e["default_geomean_slowdown"] + 1e-9, e
assert e["groups"] and e["default"] == "gemm_32x32x32", e
assert len(e["misses"]) == e["shapes"] - e["matched"], e["misses"]
for m in e["misses"]:
    assert m["pick"] != m["tuned"] and (m["slowdown"] is None or m["slowdown"] >= 1), m
PY
"$KOPT" heuristic eval --results "$full" --holdout "256,512" --default gemm_32x32x32 >"$WORK/holdout.log" ||
  { cat "$WORK/holdout.log"; fail "holdout"; }
grep -q "| N=256,K=512 |" "$WORK/holdout.log" || { cat "$WORK/holdout.log"; fail "holdout table"; }
python3 - "$full" "$WORK/bad.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
rows[2][rows[0].index("us")] = "x"
csv.writer(open(sys.argv[2], "w"), lineterminator="\n").writerows(rows)
PY
if "$KOPT" heuristic fit --results "$WORK/bad.csv" --out "$WORK/h2.json" 2>"$WORK/bad.log"; then
  fail "a bad number was accepted"
fi
grep -q "bad.csv:3: us: expected a number, got 'x'" "$WORK/bad.log" || { cat "$WORK/bad.log"; fail "bad number message"; }

echo "--- wave features: fit through the CLI; rules over a fill and a waves ratio build and dispatch"
"$KOPT" heuristic fit --results "$full" --out "$WORK/heuristic_fill.json" --max-arms 3 \
  --features "M,N,K,M*N,fill(16x64,4),fill(64x64,4),waves(16x64,4)/waves(64x64,4)" >"$WORK/fit_fill.log" ||
  { cat "$WORK/fit_fill.log"; fail "fit with fill features"; }
if "$KOPT" heuristic fit --results "$full" --out "$WORK/h3.json" --features "M,fill(16x64)" \
  2>"$WORK/fill_bad.log"; then
  fail "a malformed fill was accepted"
fi
grep -q "expected fill(<BM>x<BN>,<C>)" "$WORK/fill_bad.log" || { cat "$WORK/fill_bad.log"; fail "fill message"; }
fill_src=$WORK/src/fill
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$fill_src"
python3 - "$fill_src/family.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["heuristic"] = {"rules": [
    {"if": [["waves(16x64,7)/waves(64x64,7)", ">=", 3500]], "kernel": "gemm_32x32x32"},
    {"if": [["fill(16x64,7)", ">=", 75]], "kernel": "gemm_16x64x64"},
    {"kernel": "gemm_64x64x64"}]}
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
fb=$WORK/fill-build
cmake -S "$fill_src" -B "$fb" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF \
  >"$WORK/fill-configure.log" || { cat "$WORK/fill-configure.log"; fail "configure with a fill rule"; }
ninja -C "$fb" candidate_00 >"$WORK/fill-build.log" || { cat "$WORK/fill-build.log"; fail "build"; }
"$fb/kopt/host_gemm/bin/candidate_00" --configs "$fill_src/configs.csv" --benchmark --warmup 0 \
  --repeat 1 --out "$WORK/fill.csv" >/dev/null || fail "run the fill-dispatched harness"
# The same harness serving rounds (--serve): one process, a results file and an answer per line.
printf 'run t1 %s\nrun t2 %s\n' "$WORK/serve1.csv" "$WORK/serve2.csv" |
  "$fb/kopt/host_gemm/bin/candidate_00" --configs "$fill_src/configs.csv" --benchmark \
    --warmup 0 --repeat 1 --serve >"$WORK/serve.out" 2>"$WORK/serve.err" ||
  { cat "$WORK/serve.err"; fail "a served harness"; }
[ "$(grep '^kopt-run-done' "$WORK/serve.out")" = "$(printf 'kopt-run-done t1\nkopt-run-done t2')" ] ||
  { cat "$WORK/serve.out"; fail "a served harness answers each run with its token"; }
[ "$(cut -d, -f1-4 "$WORK/serve1.csv")" = "$(cut -d, -f1-4 "$WORK/fill.csv")" ] &&
  [ "$(cut -d, -f1-4 "$WORK/serve2.csv")" = "$(cut -d, -f1-4 "$WORK/fill.csv")" ] ||
  fail "each served run writes every config's row, as a one-shot run does"
echo "walk" | "$fb/kopt/host_gemm/bin/candidate_00" --configs "$fill_src/configs.csv" \
  --benchmark --serve >/dev/null 2>"$WORK/serve_bad.err" && fail "a bad line is served"
grep -q "expected 'run TOKEN RESULTS_FILE' on stdin, got 'walk'" "$WORK/serve_bad.err" ||
  { cat "$WORK/serve_bad.err"; fail "a bad line's error names it"; }
python3 - "$WORK/fill.csv" <<'PY' || fail "the generated dispatch disagrees with the fill rule"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows
picked = set()
for r in rows:
    m, n = int(r["M"]), int(r["N"])
    tiles = -(-m // 16) * -(-n // 64)
    fill = 100 * tiles // (-(-tiles // 7) * 7)
    ratio = 1000 * -(-tiles // 7) // -(-(-(-m // 64) * -(-n // 64)) // 7)
    want = "gemm_32x32x32" if ratio >= 3500 else "gemm_16x64x64" if fill >= 75 else "gemm_64x64x64"
    assert r["kernel"] == want, (r, fill, ratio, want)
    picked.add(want)
assert len(picked) == 3, picked  # the configs reach every rule
PY

echo "--- gen with the tuned table and the heuristic, compile=dispatch"
cp "$state/tune/00/tuned.csv" "$family_src/tuned.csv"
cp "$WORK/heuristic.json" "$family_src/heuristic.json"
python3 - "$family_src/family.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec.update({"tuned": "tuned.csv", "heuristic": "heuristic.json", "compile": "dispatch"})
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
"$KOPT" gen-instances --spec "$family_src/family.json" --out-root "$WORK/gen" --candidate 00 \
  >"$WORK/gen.log" 2>&1 || { cat "$WORK/gen.log"; fail "gen-instances"; }
python3 - "$WORK/gen/00/manifest.json" "$family_src/tuned.csv" "$WORK/heuristic.json" <<'PY' || fail "manifest"
import csv, json, sys
manifest = json.load(open(sys.argv[1]))
tuned = {r["kernelName"] for r in csv.DictReader(open(sys.argv[2]))}
rules = {r["kernel"] for r in json.load(open(sys.argv[3]))["rules"]}
expected = sorted(tuned | rules | {"gemm_32x32x32"})
assert manifest["compiled"] == expected, (manifest["compiled"], expected)
assert len(expected) < 10, "compile=dispatch must leave instances out"
PY
ls "$WORK/gen/00/instances" | sed 's/\.cpp$//' | sort >"$WORK/tus"
python3 -c "import json,sys; print('\n'.join(json.load(open(sys.argv[1]))['compiled']))" \
  "$WORK/gen/00/manifest.json" | diff - "$WORK/tus" || fail "instance TUs differ from the manifest"
echo "PASS"
