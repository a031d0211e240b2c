#!/usr/bin/env bash
# Nsight Compute's full report of one kernel instance of a built candidate on given configs, for
# reading where its time goes (kopt analyze gives one line per class; this gives every section):
#   bash examples/cuda_paged_decode/bench/ncu_one.sh <harness> <instance> <configs.csv> [out]
# e.g. after device_run.sh: /tmp/kopt-paged/build/kopt/cuda_paged_decode/bin/candidate_06
# paged_w4_s0 one.csv. Runs the harness once per config (--benchmark, no warm-up, one timed run)
# under `ncu --set full` for the kernels named paged_decode / paged_reduce, and writes the
# details page as text to <out> (default $OUT/ncu_<instance>.txt).
set -euo pipefail
harness=${1:?harness} kernel=${2:?instance} configs=${3:?configs.csv}
out=${4:-${OUT:-/tmp}/ncu_$kernel.txt}
export PATH=$PATH:/usr/local/cuda/bin
ncu --set full --kernel-name regex:'paged_(decode|reduce)' --print-units base --page details \
  "$harness" --configs "$configs" --kernel "$kernel" --benchmark --warmup 0 --repeat 1 \
  --out "$(dirname "$out")/ncu_$kernel.results.csv" >"$out" 2>&1
grep -E '^  [a-z_:]+paged|Duration|Executed Ipc A|Achieved Occupancy|Registers Per|Memory Throughput|DRAM Throughput|L1/TEX Hit|Warp Cycles Per Issued|Local' "$out" | head -60
