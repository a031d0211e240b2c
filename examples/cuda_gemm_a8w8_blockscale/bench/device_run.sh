#!/usr/bin/env bash
# One device call: check every instance, sweep the configs with candidates 00 (twice, for the
# noise), 01 and 02, and try a harness binary built elsewhere; CSVs and one log go to $OUT (the
# device tool brings back at most 8 files).
# Usage (repo root): examples/cuda_gemm_a8w8_blockscale/bench/device_run.sh build-cuda [repeat]
set -uo pipefail
B=${1:-build-cuda}
R=${2:-10}
E=examples/cuda_gemm_a8w8_blockscale
OUT=${OUT:-/tmp/kopt-out}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; date -u; } | tee "$OUT/device.txt"
if ! "$B/standalone_00" --check > "$OUT/check.log" 2>&1; then
  echo "check failed or prebuilt binary does not run here:"; tail -20 "$OUT/check.log"
  "$E/bench/build.sh" "$B" && "$B/standalone_00" --check > "$OUT/check.log" 2>&1
fi
tail -3 "$OUT/check.log"
for c in 00 01 02 00b; do
  rows=0; [ "$c" = 00 ] && rows=2
  "$B/standalone_${c%b}" --sweep "$E/configs.csv" --repeat "$R" --cpu-rows $rows \
    --csv "$OUT/sweep_$c.csv" > /tmp/sweep_$c.log 2>&1
  echo "sweep $c rc=$? $(tail -1 /tmp/sweep_$c.log)"
  cat /tmp/sweep_$c.log >> "$OUT/sweeps.log"
done
if [ -x "$B/hx/harness_fake" ]; then
  h=$B/hx/harness_fake
  { $h --configs $B/hx/small.csv --write-golden /tmp/g.bin && \
    $h --configs $B/hx/small.csv --correctness --golden /tmp/g.bin && \
    $h --configs $B/hx/small.csv --benchmark --golden /tmp/g.bin --kernel a8w8_bs_128x128_w2x4_s3 && \
    timeout 120 ncu --csv --print-units base --metrics gpu__time_duration.sum --clock-control none \
      --nvtx -k regex:gemm_a8w8_blockscale $h --configs $B/hx/small.csv --benchmark --repeat 2 ; } \
    > "$OUT/harness.log" 2>&1
  echo "harness rc=$?"; grep -E "harness:|config_" "$OUT/harness.log" | tail -14
fi
