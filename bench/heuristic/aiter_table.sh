#!/usr/bin/env bash
# The winners-only heuristic figures of docs/PERFORMANCE.md from aiter's own tuned table (no GPU):
# fit on the whole table and score it (in sample), then hold out 30% of its (N,K) pairs chosen
# by --holdout-seeded 0.3 --seed S, fit on the rest and score them, for seeds 1..20; beside
# each, the most frequent kernel alone on the same shapes and aiter PR 3316's hand-made rules.
#   bash bench/heuristic/aiter_table.sh [kopt] [tuned.csv]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kopt=${1:-kopt}
table=${2:-$here/../../tests/fixtures/aiter/a8w8_blockscale_tuned_gemm_qwen3_vl_32b.csv}
seeds=${SEEDS:-20}
# The tile shapes of the table's kernels, at one wave = 304 tiles (MI300X's 304 CUs): wave
# fills, wave counts, and the ratio of every two tile shapes' wave counts.
tiles=(16x64 32x64 64x64 16x128 32x128 64x128 128x128 128x64 64x256)
features="M,N,K,M*N"
for t in "${tiles[@]}"; do
  features+=",fill($t,304),waves($t,304)"
done
for ((i = 0; i < ${#tiles[@]}; i++)); do
  for ((j = i + 1; j < ${#tiles[@]}; j++)); do
    features+=",waves(${tiles[i]},304)/waves(${tiles[j]},304)"
  done
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
match() { python3 -c "import json, sys; e = json.load(sys.stdin); print(f\"{100 * e['match']:.2f}% | {100 * e['baseline_match']:.2f}%\")"; }
echo "$table"
echo "aiter PR 3316's rules: $("$kopt" heuristic eval --results "$table" --heuristic "$here/aiter_3316_gfx942.json" --json | match)"
echo
echo "| arms | in sample | most frequent alone | held out, seed 1 | most frequent alone | seeds 1-$seeds: mean, min, max | >= 98.5% |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for arms in 8 16 24; do
  "$kopt" heuristic fit --results "$table" --out "$work/h.json" --max-arms "$arms" --features "$features" >/dev/null
  inside=$("$kopt" heuristic eval --results "$table" --heuristic "$work/h.json" --json | match)
  held=()
  for ((seed = 1; seed <= seeds; seed++)); do
    held+=("$("$kopt" heuristic eval --results "$table" --holdout-seeded 0.3 --seed "$seed" \
      --max-arms "$arms" --features "$features" --json | match)")
  done
  printf '%s\n' "${held[@]}" | python3 -c "
import sys
rows = [l.split(' | ') for l in sys.stdin.read().split('\n') if l]
v = [float(r[0].rstrip('%')) for r in rows]
print(f'| $arms | $inside | {rows[0][0]} | {rows[0][1]} | {sum(v) / len(v):.2f}%, {min(v):.2f}%, {max(v):.2f}% | {sum(x >= 98.5 for x in v)} of {len(v)} |')"
done
