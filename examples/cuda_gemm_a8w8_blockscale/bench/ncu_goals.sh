#!/usr/bin/env bash
# The family's goals in kernel time, the measure of kopt's keep test: ncu (--clock-control none)
# on cuBLASLt's kernels (bench/anchor.cu) and on a candidate's heuristic kernel (bench/standalone.cu
# --kernel <the pick>), one shape per ncu run, for the shapes of configs.csv with M <= 16 and
# M >= 2048; the copy floor is the anchor's (a 2 GiB copy, events). Needs device_wgmma.sh's prep
# for the candidate first (the standalone build, its --check and anchor.csv in $OUT).
#   KOPT_WG_CANDS=<id> bash examples/cuda_gemm_a8w8_blockscale/bench/device_wgmma.sh prep
#   bash examples/cuda_gemm_a8w8_blockscale/bench/ncu_goals.sh <id> [passes]
# Writes $OUT/ncu_goals_<id>/p<pass>/{lt,k}_<M>_<N>_<K>.csv and prints ncu_goals.py's report.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
id=${1:?usage: ncu_goals.sh <candidate id> [passes]}
passes=${2:-1}
out=${OUT:-/tmp/kopt-out}
B=${KOPT_WG_BUILD:-/tmp/kopt-wg}
export PATH=$PATH:/usr/local/cuda/bin
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
for need in "$B/anchor" "$B/standalone_$id" "$out/anchor.csv"; do
  [ -e "$need" ] || { echo "ncu_goals.sh: no $need: run device_wgmma.sh prep with KOPT_WG_CANDS=$id first" >&2; exit 2; }
done
command -v ncu >/dev/null || { echo "ncu_goals.sh: no ncu on PATH" >&2; exit 2; }
metrics=gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum
python3 "$here/ncu_goals.py" picks "$here/../configs.csv" >"$B/ncu_goals_picks.csv" || exit 2
for p in $(seq 1 "$passes"); do
  dir=$out/ncu_goals_$id/p$p
  mkdir -p "$dir"
  while IFS=, read -r m n k kernel; do
    printf 'M,N,K\n%s,%s,%s\n' "$m" "$n" "$k" >"$B/ncu_goals_one.csv"
    ncu --clock-control none --metrics "$metrics" --csv "$B/anchor" "$B/ncu_goals_one.csv" --repeat 3 \
      >"$dir/lt_${m}_${n}_${k}.csv" 2>"$dir/lt_${m}_${n}_${k}.err"
    ncu --clock-control none --metrics "$metrics" --csv -k regex:gemm_a8w8 "$B/standalone_$id" --sweep \
      "$B/ncu_goals_one.csv" --repeat 3 --kernel "$kernel" >"$dir/k_${m}_${n}_${k}.csv" 2>"$dir/k_${m}_${n}_${k}.err"
  done <"$B/ncu_goals_picks.csv"
done
python3 "$here/ncu_goals.py" report "$out/anchor.csv" "$out"/ncu_goals_"$id"/p*
