# kopt build-report on a real build of the host example: its --json numbers match the
# .ninja_log ninja wrote, ccache hits are counted per object, a fresh candidate folder
# identical to 01 compiles nothing, a candidate changing one instance's template compiles that TU
# only, a changed content hash re-links without a compile, and a family over its
# compile_budget_s fails its bench target naming the slowest TUs.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need ccache
need python3

export CCACHE_DIR=$WORK/ccache
src=$WORK/host_gemm
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$src"
b=$WORK/b
cmake -S "$src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DCMAKE_BUILD_TYPE=Release \
  >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
grep -q "kopt: job pool kopt_compile_host=" "$WORK/configure.log" || fail "no job pool sized"
grep -q "pool = kopt_compile_host" "$b/build.ninja" || fail "candidate compiles are not pooled"

echo "--- a cold build: the report matches the newest run of .ninja_log"
ninja -C "$b" candidate_01 >/dev/null
"$KOPT" build-report "$b" --json --jobs 2 >"$WORK/cold.json"
python3 - "$b/.ninja_log" "$WORK/cold.json" <<'PY' || fail "cold report does not match .ninja_log"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].startswith("# ninja log v"), lines[0]
rows = [l.split("\t") for l in lines[1:] if l]
run, last_end, seen = [], -1, set()
for start, end, _, out, h in rows:
    start, end = int(start), int(end)
    if run and (end < last_end or out in seen):
        run, seen = [], set()
    run.append((start, end, out, h)); seen.add(out); last_end = end
objects = {out: (end - start) / 1000 for start, end, out, _ in run if out.endswith(".o")}
report = json.load(open(sys.argv[2]))
assert len(report["tus"]) == len(objects), (len(report["tus"]), len(objects))
assert {t["object"] for t in report["tus"]} == set(objects)
for t in report["tus"]:
    assert abs(t["seconds"] - objects[t["object"]]) < 1e-9, t
wall = (max(e for _, e, _, _ in run) - min(s for s, _, _, _ in run)) / 1000
assert abs(report["wall_s"] - wall) < 1e-9, (report["wall_s"], wall)
total = sum(objects.values())
assert abs(report["tu_sum_s"] - total) < 1e-6
assert abs(report["efficiency"] - total / (wall * 2)) < 1e-6
secs = [t["seconds"] for t in report["tus"]]
assert secs == sorted(secs, reverse=True), "not slowest first"
instances = [t for t in report["tus"] if t["instance"]]
assert len(instances) == 10 and all(t["family"] == "host_gemm" and t["candidate"] == "01"
                                    for t in instances), instances
assert report["ccache"]["misses"] == len(objects), report["ccache"]  # a cold cache
fam = report["families"][0]
assert fam["name"] == "host_gemm" and fam["tus"] == len(objects), fam
print("cold:", len(objects), "TUs, wall", wall, "s")
PY

echo "--- a new candidate folder identical to 01: every TU a ccache hit, 0 misses"
cp -r "$src/candidates/01" "$src/candidates/06"
sed -i 's/"01"/"06"/' "$src/candidates/06/candidate.json"
cmake "$b" >/dev/null
ninja -C "$b" candidate_06 >/dev/null
"$KOPT" build-report "$b" --json >"$WORK/copy.json"
python3 - "$WORK/copy.json" <<'PY' || fail "a copy of 01 was not all ccache hits"
import json, sys
r = json.load(open(sys.argv[1]))
tus = [t for t in r["tus"] if t["candidate"] == "06"]
assert len(tus) >= 13, len(tus)  # 10 instances, registry, dispatch, harness
assert r["ccache"]["misses"] == 0, r["ccache"]
assert all(t["ccache"] in ("direct_hit", "preprocessed_hit") for t in tus), tus
PY
first=$("$b/kopt/host_gemm/bin/candidate_06" --help 2>&1 | grep -m1 "^kopt-candidate:" || true)
[[ $first == "kopt-candidate: 06 "* ]] || fail "candidate 06 names itself '$first'"

echo "--- a candidate changing one instance's template: 1 compile, every other TU a ccache hit"
mkdir -p "$src/candidates/07/instances"
echo '{"id": "07", "base": "01", "hypothesis": "one instance changed", "target": "global"}' \
  >"$src/candidates/07/candidate.json"
{ cat "$src/instance.cpp.in"; echo 'static_assert(sizeof(int) >= 2, "variant of {{name}}");'; } \
  >"$src/candidates/07/instances/gemm_32x32x32.in"
ninja -C "$b" candidate_07 >/dev/null # the new folder re-runs cmake first
"$KOPT" build-report "$b" --json >"$WORK/one.json"
python3 - "$WORK/one.json" <<'PY' || fail "one changed instance did not cost exactly one compile"
import json, sys
r = json.load(open(sys.argv[1]))
tus = [t for t in r["tus"] if t["candidate"] == "07"]
assert len(tus) >= 13 and len(tus) == len(r["tus"]), len(tus)
missed = [t["instance"] for t in tus if t["ccache"] == "miss"]
assert missed == ["gemm_32x32x32"], missed
assert all(t["ccache"] == "direct_hit" for t in tus if t["instance"] != "gemm_32x32x32"), tus
PY

echo "--- the content hash is not compiled in: a new hash re-links, compiles nothing"
gen7=$b/kopt/host_gemm/gen/07
bin7=$b/kopt/host_gemm/bin/candidate_07
first=$("$bin7" --help 2>&1 | grep -m1 "^kopt-candidate:" || true)
[[ $first == "kopt-candidate: 07 $(cat "$gen7/kopt_hash.txt")" ]] || fail "candidate 07 prints '$first'"
grep -aq "@kopt-hash-slot@$(cat "$gen7/kopt_hash.txt")" "$bin7" || fail "the hash is not in $bin7"
old_hash=$(cat "$gen7/kopt_hash.txt")
# In every candidate's hash, in no TU (bench warmup and repeat are: kopt_manifest.h holds them).
sed -i 's/"timeout_s": 300/"timeout_s": 301/' "$src/family.json"
grep -q '"timeout_s": 301' "$src/family.json" || fail "the timeout edit did not apply"
ninja -C "$b" candidate_07 >"$WORK/rehash.log"
[[ $(cat "$gen7/kopt_hash.txt") != "$old_hash" ]] || fail "family.json's change kept the hash"
first=$("$bin7" --help 2>&1 | grep -m1 "^kopt-candidate:" || true)
[[ $first == "kopt-candidate: 07 $(cat "$gen7/kopt_hash.txt")" ]] || fail "after re-link: '$first'"
grep -q "Linking CXX executable" "$WORK/rehash.log" || { cat "$WORK/rehash.log"; fail "no re-link"; }
if grep -q "Building CXX object" "$WORK/rehash.log"; then
  cat "$WORK/rehash.log"; fail "a hash change compiled a TU"
fi

echo "--- a compile budget the family exceeds fails its bench target"
ninja -C "$b" candidate_00 >/dev/null # built first: the over-budget build compiles only 03's TUs
python3 - "$src/family.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1])); spec["compile_budget_s"] = 0.001
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
echo "// edit" >>"$src/candidates/03/gemm_kernel.hpp"
if cmake --build "$b" --target candidate_03_bench >"$WORK/budget.log" 2>&1; then
  cat "$WORK/budget.log"; fail "the bench passed over budget"
fi
grep -q "family host_gemm: the newest build took .* over its compile budget of 0.001 s" \
  "$WORK/budget.log" || { cat "$WORK/budget.log"; fail "no budget message"; }
grep -Eq "^  [0-9.]+ s  .*candidate_03.dir/.*instances/gemm_" "$WORK/budget.log" ||
  fail "the slowest TUs are not named"
echo "PASS"
