#!/usr/bin/env bash
# The known-effect check of a machine: builds a calibration family (examples/cuda_spin on a GPU,
# examples/host_spin on the host), records its baseline 00 as BEST, then decides each candidate
# N times through the user's flow (`cmake --build --target candidate_<id>_bench`, then
# `ctest -L keep -R candidate_<id>`), nothing recorded, so every decision is against BEST 00.
# One line per decision goes to $OUT/calibration.csv, one line per candidate to
# $OUT/summary.txt (how many keep / tie / regression / other).
#   bash bench/calibration/run.sh examples/host_spin [N] [ROUNDS]
#   KOPT_PREFIX=<kopt install> bash bench/calibration/run.sh examples/cuda_spin 20
# KOPT_CALIBRATION_CONTINUE=1 adds N decisions per candidate to the last run's (same work folder).
# KOPT_CALIBRATION_ONLY="01 02" decides only those candidates (a series split over two machines).
# KOPT_CALIBRATION_LOAD=1 keeps every CPU busy (one busy loop per CPU) while each bench runs: the
# host's decisions under full foreign load.
# Nothing is recorded, so each decision after a candidate's first pools its earlier measurements
# (docs/KEEP.md): a series is one candidate measured again N times, as an agent would.
# kopt comes from KOPT_PREFIX (an install) or KOPT_BUILD (a build folder, default build/).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$(cd "$1" && pwd)
n=${2:-20}
rounds=${3:-}
out=${OUT:-/tmp/kopt-calibration}
work=${KOPT_CALIBRATION_WORK:-/tmp/kopt-calibration-work}
family=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$src/family.json")
if [ -n "${KOPT_PREFIX:-}" ]; then
  kopt=$KOPT_PREFIX/bin/kopt find=(-DCMAKE_PREFIX_PATH="$KOPT_PREFIX")
else
  build=${KOPT_BUILD:-$root/build}
  kopt=$build/src/kopt find=(-DKernelOpt_DIR="$build")
fi
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$out"
b=$work/build
state=(--spec "$work/src/family.json" --state-dir "$b/kopt/$family")
if [ -n "${KOPT_CALIBRATION_CONTINUE:-}" ] && [ -f "$work/calibration.csv" ]; then
  echo "continuing the decisions in $work"
else
  rm -rf "$work" && mkdir -p "$work" && cp -r "$src" "$work/src"
  if [ -n "$rounds" ]; then
    python3 - "$work/src/family.json" "$rounds" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1])); spec["bench"]["rounds"] = int(sys.argv[2])
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
  fi
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>/dev/null ||
      grep -m1 "model name" /proc/cpuinfo; } >"$out/machine.txt"
  cmake -S "$work/src" -B "$b" -G Ninja "${find[@]}" -DKOPT_USE_CCACHE=OFF >"$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; exit 1; }
  cmake --build "$b" -j "$(nproc)" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
  { "$kopt" bench "${state[@]}" --best && "$kopt" decide "${state[@]}" --candidate 00 &&
      "$kopt" record "${state[@]}" --candidate 00; } >"$out/best.log" 2>&1 ||
    { tail -30 "$out/best.log"; exit 1; }
  echo "candidate,i,verdict,overall,low,high,bench_s,keep_s" >"$work/calibration.csv"
fi
: >"$out/summary.txt"
for dir in "$work/src/candidates"/*/; do
  id=$(basename "$dir")
  [ "$id" = 00 ] && continue
  if [ -n "${KOPT_CALIBRATION_ONLY:-}" ] && [[ " $KOPT_CALIBRATION_ONLY " != *" $id "* ]]; then
    continue
  fi
  done_so_far=$(grep -c "^$id," "$work/calibration.csv")
  for i in $(seq $((done_so_far + 1)) $((done_so_far + n))); do
    s=$(date +%s.%N)
    load=()
    if [ -n "${KOPT_CALIBRATION_LOAD:-}" ]; then
      for _ in $(seq "$(nproc)"); do (while :; do :; done) & load+=($!); done
    fi
    cmake --build "$b" --target "candidate_${id}_bench" >"$work/bench.log" 2>&1
    if [ ${#load[@]} -gt 0 ]; then kill "${load[@]}"; wait "${load[@]}" 2>/dev/null; fi
    m=$(date +%s.%N)
    ctest --test-dir "$b" -L keep -R "^candidate_${id}\\." >"$work/ctest.log" 2>&1
    e=$(date +%s.%N)
    { echo "=== $id decision $i"; cat "$work/bench.log" "$work/ctest.log"; } >>"$work/runs.log"
    python3 - "$b/kopt/$family/results/$id/decision.json" "$id" "$i" "$s" "$m" "$e" \
      >>"$work/calibration.csv" <<'PY'
import json, os, sys
path, cid, i, s, m, e = sys.argv[1:7]
try:
    if os.path.getmtime(path) < float(s):
        raise OSError("no decision from this run")
    d = json.load(open(path)); o = d["overall"]
    pct = lambda v: "%+.3f" % (100 * v) if v is not None else ""
    print("%s,%s,%s,%s,%s,%s,%.1f,%.1f" % (cid, i, d["verdict"], pct(o["change"]), pct(o.get("low")),
          pct(o.get("high")), float(m) - float(s), float(e) - float(m)))
except (OSError, KeyError, ValueError) as err:
    print("%s,%s,no-decision,,,,%.1f,%.1f" % (cid, i, float(m) - float(s), float(e) - float(m)))
PY
    tail -1 "$work/calibration.csv"
    cp "$work/calibration.csv" "$out/"  # kept as it grows: a call cut short loses no decision
  done
  hyp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hypothesis"])' "$dir/candidate.json")
  python3 - "$work/calibration.csv" "$id" "$hyp" >>"$out/summary.txt" <<'PY'
import collections, csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["candidate"] == sys.argv[2]]
c = collections.Counter(r["verdict"] for r in rows)
print("%s (%s): %d decisions: %s" % (sys.argv[2], sys.argv[3], len(rows),
      ", ".join("%s %d" % (k, v) for k, v in sorted(c.items()))))
PY
  tail -1 "$out/summary.txt"
done
"$kopt" status "${state[@]}" >"$out/status.txt" 2>&1
cp "$work/calibration.csv" "$out/"
gzip -c "$work/runs.log" >"$out/runs.log.gz"
