#!/usr/bin/env bash
# Eight kopt rounds of cuda_spin started at once on a machine of several GPUs, 3 times, each in a
# fresh copy of the family with A/A candidates 06-08: when each round answers, which GPU each
# benchmark held and when (overlapping spans on one GPU are listed). Results under $OUT.
#   KOPT_PREFIX=<kopt install> bash bench/multi_gpu_rounds.sh
set -u
prefix=${KOPT_PREFIX:?set KOPT_PREFIX to a kopt install}
export PATH=$prefix/bin:$PATH:/usr/local/cuda/bin
R=${OUT:-/tmp/kopt-multi}; rm -rf "$R"; mkdir -p "$R"
root=$(cd "$(dirname "$0")/.." && pwd)
export KOPT_DEVICE_LOCK_DIR=$R/locks
nvidia-smi --query-gpu=index,name,driver_version --format=csv > "$R/gpu.txt" 2>&1; nproc >> "$R/gpu.txt"
for rep in 1 2 3; do
  w=$R/w$rep; mkdir -p "$w"; cp -r "$root/examples/cuda_spin" "$w/src"
  for id in 06 07 08; do
    mkdir -p "$w/src/candidates/$id"
    echo "{\"id\": \"$id\", \"base\": \"00\", \"hypothesis\": \"A/A $id: a comment\", \"target\": \"global\"}" > "$w/src/candidates/$id/candidate.json"
    { cat "$w/src/spin_kernel.cuh"; echo "// A/A $id"; } > "$w/src/candidates/$id/spin_kernel.cuh"
  done
  cmake -S "$w/src" -B "$w/build" -G Ninja -DKernelOpt_DIR=$prefix/lib/cmake/KernelOpt \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DKOPT_USE_CCACHE=OFF > "$w/configure.log" 2>&1 || tail -20 "$w/configure.log"
  cmake --build "$w/build" -j 16 > "$w/build.log" 2>&1 || tail -20 "$w/build.log"
  (cd "$w/build" && kopt round --id 00 > "$w/r00.txt" 2>&1) || tail -5 "$w/r00.txt"
  s=$EPOCHREALTIME
  for id in 01 02 03 04 05 06 07 08; do
    (cd "$w/build" && kopt round --id $id --json > "$w/r$id.json" 2> "$w/r$id.err"; echo "$id $? $EPOCHREALTIME" >> "$w/ends.txt") &
  done
  wait
  echo "start $s" >> "$w/ends.txt"
  python3 - "$w" <<'PY'
import json, sys, glob, collections
w = sys.argv[1]
ends = dict((l.split()[0], l.split()) for l in open(w + "/ends.txt"))
start = float(ends["start"][1])
spans = collections.defaultdict(list)
rows = []
for f in sorted(glob.glob(w + "/r0[1-8].json")):
    cid = f[-7:-5]
    try:
        j = json.load(open(f))
    except Exception as e:
        rows.append((cid, "no json", ends[cid][1], round(float(ends[cid][2]) - start, 1))); continue
    d = j.get("device") or {}
    spans[d.get("slot")].append((d.get("from"), d.get("to"), cid))
    rows.append((cid, j.get("verdict"), ends[cid][1], round(float(ends[cid][2]) - start, 1), d.get("slot"),
                 round(d.get("waited_s", 0), 1), j.get("measured_again")))
for r in rows: print(" ".join(str(x) for x in r))
overlaps = 0
for slot, ss in spans.items():
    ss.sort()
    for a, b in zip(ss, ss[1:]):
        if a[1] and b[0] and b[0] < a[1]: overlaps += 1; print("OVERLAP", slot, a, b)
print("slots used:", {k: len(v) for k, v in spans.items()}, "overlaps:", overlaps,
      "last answer: %.1f s" % max(float(ends[c][2]) - start for c in ends if c != "start"))
PY
done > "$R/summary.txt" 2>&1
cat "$R/gpu.txt" "$R/summary.txt"
