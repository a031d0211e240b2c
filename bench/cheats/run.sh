#!/usr/bin/env bash
# The cheat suite through the user's flow on a machine (a GPU for the CUDA families): a copy of
# the family with its baseline (the candidate without base) as BEST and every cheat of the
# fixtures folder as a candidate (its files but expect.txt, the id its candidate.json names), then for each cheat
# `cmake --build --target candidate_<id>_bench`, `ctest -L keep -R candidate_<id>` and
# `kopt decide --json`. One line per cheat goes to $OUT/cheats_<family>.csv: the verdict, whether
# the keep test passed, whether the reason holds the cheat's expect.txt (a grep -E pattern for the
# CUDA spin cheats, plain text otherwise), the bench's seconds and the reason. With
# KOPT_CHEATS_FLOW=round each cheat goes through `kopt round --id <id> --json` instead (build,
# measure, decide and record in one step, as an agent runs it): the keep test column then says
# whether the round kept it, the seconds are the round's.
#   KOPT_PREFIX=<kopt install> bash bench/cheats/run.sh examples/cuda_gemm_a8w8_blockscale \
#     tests/fixtures/cheats/cuda_gemm_a8w8_blockscale
set -uo pipefail
src=$(cd "$1" && pwd)
cheats=$(cd "$2" && pwd)
out=${OUT:-/tmp/kopt-cheats}
family=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$src/family.json")
work=${KOPT_CHEATS_WORK:-/tmp/kopt-cheats-work}/$family
if [ -n "${KOPT_PREFIX:-}" ]; then
  kopt=$KOPT_PREFIX/bin/kopt find=(-DCMAKE_PREFIX_PATH="$KOPT_PREFIX")
else
  build=${KOPT_BUILD:-$(dirname "$0")/../../build}
  kopt=$build/src/kopt find=(-DKernelOpt_DIR="$build")
fi
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$out"
rm -rf "$work" && mkdir -p "$work" && cp -r "$src" "$work/src"
ids=()
for cheat in "$cheats"/*/; do
  id=$(sed -n 's/.*"id": *"\([0-9]*\)".*/\1/p' "$cheat/candidate.json")
  mkdir -p "$work/src/candidates/$id" && (cd "$cheat" && cp $(ls | grep -v '^expect.txt$') "$work/src/candidates/$id/")
  ids+=("$id:$(basename "$cheat")")
done
b=$work/build
state=(--spec "$work/src/family.json" --state-dir "$b/kopt/$family")
baseline=$(cd "$work/src/candidates" && grep -L '"base"' -- */candidate.json | head -1 | cut -d/ -f1)
targets=("candidate_$baseline")
for entry in "${ids[@]}"; do targets+=("candidate_${entry%%:*}"); done
cmake -S "$work/src" -B "$b" -G Ninja "${find[@]}" -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DKOPT_USE_CCACHE=OFF >"$out/cheats_$family.configure.log" 2>&1 ||
  { tail -30 "$out/cheats_$family.configure.log"; exit 1; }
# A cheat that does not build is a failed candidate, not the suite's failure: -k 0 builds the rest.
cmake --build "$b" -j "$(nproc)" --target "${targets[@]}" -- -k 0 >"$out/cheats_$family.build.log" 2>&1
{ "$kopt" bench "${state[@]}" --best && "$kopt" decide "${state[@]}" --candidate "$baseline" &&
    "$kopt" record "${state[@]}" --candidate "$baseline"; } >"$out/cheats_$family.best.log" 2>&1 ||
  { tail -30 "$out/cheats_$family.best.log"; exit 1; }
echo "cheat,id,verdict,keep_test,reason_matches,bench_s,reason" >"$out/cheats_$family.csv"
for entry in "${ids[@]}"; do
  id=${entry%%:*} slug=${entry#*:}
  s=$(date +%s.%N)
  keep=failed
  if [ "${KOPT_CHEATS_FLOW:-bench}" = round ]; then
    "$kopt" round "${state[@]}" --build-dir "$b" --id "$id" --max-consecutive 1000 --json \
      >"$work/decide_$id.json" 2>"$work/decide_$id.err"
    e=$(date +%s.%N)
    cp "$work/decide_$id.err" "$work/bench_$id.log"
    [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' \
      "$work/decide_$id.json" 2>/dev/null)" = keep ] && keep=PASSED
  else
    cmake --build "$b" --target "candidate_${id}_bench" >"$work/bench_$id.log" 2>&1
    e=$(date +%s.%N)
    ctest --test-dir "$b" -L keep -R "^candidate_$id\." >"$work/keep_$id.log" 2>&1 && keep=PASSED
    "$kopt" decide "${state[@]}" --candidate "$id" --json >"$work/decide_$id.json" 2>"$work/decide_$id.err"
  fi
  python3 - "$work/decide_$id.json" "$work/decide_$id.err" "$work/bench_$id.log" "$cheats/$slug/expect.txt" \
    "$slug" "$id" "$keep" "$(awk "BEGIN{print $e - $s}")" >>"$out/cheats_$family.csv" <<'PY'
import json, re, sys
decision, err, bench, expect, slug, id, keep, secs = sys.argv[1:9]
try:
    d = json.load(open(decision)); verdict, reason = d["verdict"], d["reason"]
except Exception:
    verdict, reason = "error", (open(err).read() + open(bench).read()[-600:]).strip()
want = open(expect).read().strip()
text = "verdict: %s (%s)" % (verdict, reason)
ok = re.search(want, text, re.M) is not None if want.startswith("^") else want in text
print('%s,%s,%s,%s,%s,%.1f,"%s"' % (slug, id, verdict, keep, "yes" if ok else "no", float(secs),
                                    reason.replace('"', "'").replace("\n", " ")))
PY
  tail -1 "$out/cheats_$family.csv"
done
