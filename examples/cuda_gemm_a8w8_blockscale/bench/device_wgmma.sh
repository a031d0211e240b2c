#!/usr/bin/env bash
# One GPU call for the Hopper candidate (03): builds the standalone bench of 01 and 03 and the
# cuBLASLt anchor (bench/anchor.cu) with nvcc, checks every instance of 03 on odd shapes against
# the CPU fp32 reference, counts its tensor-core and TMA instructions in the SASS, then times the
# anchor (cuBLASLt FP8 + copy rate) and sweeps 03 and 01 over configs.csv in the same run.
# With KOPT_DEPS=<prefix holding include/{nlohmann,CLI,xxhash.h} and share/cmake/{nlohmann_json,
# CLI11}>, it also builds kopt from this tree on the machine and returns the install as kopt.tgz
# (for a machine whose libraries differ from the build host's). Files go to $OUT.
#   bash examples/cuda_gemm_a8w8_blockscale/bench/device_wgmma.sh prep
#   bash examples/cuda_gemm_a8w8_blockscale/bench/device_wgmma.sh sweep [repeat] [candidates...]
# (prep: builds, check, SASS, anchor, kopt; sweep: the standalone sweeps, default 03 then 01).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
E=$root/examples/cuda_gemm_a8w8_blockscale
phase=${1:-prep}
out=${OUT:-/tmp/kopt-out}
B=${KOPT_WG_BUILD:-/tmp/kopt-wg}
mkdir -p "$out" "$B"
export PATH=$PATH:/usr/local/cuda/bin
log=$out/log.txt
if [ "$phase" = sweep ]; then
  R=${2:-10}
  shift 2 2>/dev/null || shift
  for c in ${@:-03 01}; do
    [ -x "$B/standalone_$c" ] || continue
    timeout 240 "$B/standalone_$c" --sweep "$E/configs.csv" --repeat "$R" --csv "$out/sweep_$c.csv" \
      >"$B/sweep_$c.log" 2>&1
    echo "sweep $c: rc=$? $(tail -1 "$B/sweep_$c.log")" | tee -a "$log"
  done
  exit 0
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  g++ --version | head -1; cmake --version | head -1; nvcc --version | tail -1; } >"$log" 2>&1
cat "$log"
if [ -n "${KOPT_DEPS:-}" ]; then
  ( cmake -S "$root" -B "$B/kopt-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKOPT_BUILD_TESTS=OFF \
      -DCMAKE_PREFIX_PATH="$KOPT_DEPS" && cmake --build "$B/kopt-build" -j 8 &&
    cmake --install "$B/kopt-build" --prefix "$B/kopt" --strip ) >"$B/kopt_build.log" 2>&1 &
  kopt_job=$!
fi
python3 - "$E/family.json" "$B/instances.inc" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    for i in spec["instances"]:
        f.write("X(%d, %d, %d, %d, %d)\n" % (i["BM"], i["BN"], i["WM"], i["WN"], i["STAGES"]))
PY
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -I "$B")
cands=(${KOPT_WG_CANDS:-01 03}) # standalone builds; every one but 01 is checked
last=${cands[${#cands[@]}-1]}
start=$(date +%s)
for c in "${cands[@]}"; do
  nvcc "${flags[@]}" -I "$E/candidates/$c" -I "$E" "$E/bench/standalone.cu" -o "$B/standalone_$c" \
    >"$B/ptxas_$c.log" 2>&1 &
done
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a "$E/bench/anchor.cu" -lcublasLt \
  -o "$B/anchor" >"$B/anchor_build.log" 2>&1 &
wait $(jobs -p | grep -v "^${kopt_job:-none}$")
echo "nvcc builds: $(( $(date +%s) - start )) s" | tee -a "$log"
for f in "$B"/ptxas_0*.log "$B/anchor_build.log"; do grep -i -E "error|warn" "$f" | head -5; done | tee -a "$log"
grep -A2 "hopper" "$B/ptxas_$last.log" | grep -E "Used|spill" | sort | uniq -c | tee -a "$log"
{ echo "SASS of $last:"
  cuobjdump -sass "$B/standalone_$last" | grep -oE "\b(QGMMA|HGMMA|HMMA|UTMALDG|SYNCS)[.A-Z0-9]*" | sort | uniq -c
} 2>&1 | tee -a "$log"

check=0
for c in "${cands[@]}"; do
  [ "$c" = 01 ] && continue
  timeout 120 "$B/standalone_$c" --check >"$B/check_$c.log" 2>&1
  rc=$?
  echo "check $c: rc=$rc" | tee -a "$log"
  grep -v "^  " "$B/check_$c.log" | tail -2 | tee -a "$log"; grep "^  " "$B/check_$c.log" | head -20 | tee -a "$log"
  [ $rc -eq 0 ] || { check=1; rm -f "$B/standalone_$c"; } # a failed check: no sweep of it
done

timeout 240 "$B/anchor" "$E/configs.csv" --repeat 20 --csv "$out/anchor.csv" >"$B/anchor.log" 2>&1
echo "anchor: rc=$?" | tee -a "$log"; head -3 "$B/anchor.log"; cat "$B/anchor.log" >>"$log"
# The same anchor through PyTorch's torch._scaled_mm (cuBLASLt underneath), as a cross-check.
[ "${KOPT_WG_TORCH:-1}" = 1 ] && timeout 240 python3 "$E/bench/anchor_torch.py" "$E/configs.csv" --repeat 20 --csv "$out/anchor_torch.csv" \
  >"$B/anchor_torch.log" 2>&1
echo "anchor_torch: rc=$?" | tee -a "$log"; head -4 "$B/anchor_torch.log"; cat "$B/anchor_torch.log" >>"$log"
if [ -n "${kopt_job:-}" ]; then
  wait "$kopt_job"; echo "kopt build: rc=$?" | tee -a "$log"; tail -5 "$B/kopt_build.log" | tee -a "$log"
  [ -x "$B/kopt/bin/kopt" ] && tar -C "$B" -czf "$out/kopt.tgz" kopt && ls -la "$out/kopt.tgz"
fi
