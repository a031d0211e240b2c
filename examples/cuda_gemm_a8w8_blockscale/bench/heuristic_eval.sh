#!/usr/bin/env bash
# The held-out heuristic table of docs/PERFORMANCE.md from a full.csv of tune.sh, no GPU needed:
# leave one (N,K) pair out, fit on the others, score the held-out pair, for three feature sets
# (M, N, K, M*N; + the wave fills of the family's tile shapes; + ratios of the wave counts of the
# six tile shapes the tuned table uses) at 8 and 12 arms; ties 0.02, default 64x64_s3. Then the
# last set fitted with --within 0.02 (the slowdown beyond 2% of tuned, best-first tree) at 16, 32
# and 48 arms.
# A gzipped full.csv (the committed sweeps in the repository's bench/data/cuda_gemm_a8w8_blockscale/) is read as it is; several files (passes
# of one sweep) are merged first, each row keeping its lowest median (passes.py merge).
#   bash examples/cuda_gemm_a8w8_blockscale/bench/heuristic_eval.sh full.csv[.gz]... [kopt]
set -euo pipefail
[ "$#" -ge 1 ] || { echo "usage: heuristic_eval.sh full.csv[.gz]... [kopt]" >&2; exit 2; }
kopt=kopt
inputs=("$@")
if [[ ${inputs[-1]} != *.csv && ${inputs[-1]} != *.csv.gz ]]; then
  kopt=${inputs[-1]}
  unset 'inputs[-1]'
fi
full=$(mktemp "${TMPDIR:-/tmp}/full-XXXXXX.csv")
trap 'rm -f "$full"' EXIT
if [ "${#inputs[@]}" -gt 1 ]; then
  python3 "$(dirname "$0")/passes.py" merge "$full" "${inputs[@]}"
elif [[ ${inputs[0]} == *.gz ]]; then
  gzip -dc "${inputs[0]}" >"$full"
else
  cp "${inputs[0]}" "$full"
fi
pairs=$(tail -n +2 "$full" | cut -d, -f2,3 | sort -u | wc -l)
fills=""
for t in 16x32 16x64 16x128 32x64 32x128 64x64 64x128 128x64 128x128; do
  fills+=",fill($t,264)"
done
main=(16x64 16x128 32x64 64x64 64x128 128x128)
ratios=""
for ((i = 0; i < ${#main[@]}; i++)); do
  for ((j = i + 1; j < ${#main[@]}; j++)); do
    ratios+=",waves(${main[i]},264)/waves(${main[j]},264)"
  done
done
echo "${inputs[*]}: $pairs (N,K) pairs, leave one out"
echo "| features | arms | match | within 2% | geomean | worst | default only |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for set in "M, N, K, M*N" "+ fills" "+ fills + waves ratios" "+ fills + waves ratios, --within 0.02"; do
  within=0
  arm_counts="8 12"
  case $set in
    "+ fills") features="M,N,K,M*N$fills" ;;
    "+ fills + waves ratios") features="M,N,K,M*N$fills$ratios" ;;
    *within*) features="M,N,K,M*N$fills$ratios" within=0.02 arm_counts="16 32 48" ;;
    *) features="M,N,K,M*N" ;;
  esac
  for arms in $arm_counts; do
    "$kopt" heuristic eval --results "$full" --holdout-frac "$(python3 -c "print(1 / $pairs + 1e-9)")" \
      --max-arms "$arms" --default a8w8_bs_64x64_w2x2_s3 --ties 0.02 --within "$within" \
      --features "$features" --json | python3 -c "
import json, sys
e = json.load(sys.stdin)
print(f\"| $set | $arms | {100 * e['match']:.1f}% | {100 * e['match_within_tie']:.1f}% | \"
      f\"{e['geomean_slowdown']:.4f}x | {e['worst_slowdown']:.3f}x | {e['default_geomean_slowdown']:.3f}x |\")"
  done
done
