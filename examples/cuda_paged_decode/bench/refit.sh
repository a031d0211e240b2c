#!/usr/bin/env bash
# The heuristic fitted again from a `kopt tune` sweep's full.csv, on a machine without a GPU:
#   bash examples/cuda_paged_decode/bench/refit.sh <kopt> <full.csv or .csv.gz> <out folder>
# Over the features below (the dispatch columns batch, ctx_max, head_size, mtp, num_q_heads and
# num_kv_heads, and the products that count the work: K/V rows and query rows of a launch), with
# ties of 2%. Writes to <out>: heldout_seed{1,2,3}.txt (30% of the shapes held out, seeded),
# folds5.txt (5-fold cross-validation), heuristic.json (fitted on every shape), in_sample.txt (it
# scored on the whole sweep) and current.txt (family.json's rules scored on the same sweep).
set -euo pipefail
kopt=${1:?kopt} full=${2:?full.csv} out=${3:?out folder}
root=$(cd "$(dirname "$0")/.." && pwd)
spec=$root/family.json
features="batch,ctx_max,head_size,mtp,num_kv_heads,batch*num_kv_heads,batch*num_kv_heads*ctx_max"
features="$features,num_q_heads,batch*num_q_heads*mtp"
mkdir -p "$out"
table=$out/full.csv
case "$full" in
*.gz) gzip -dc "$full" >"$table" ;;
*) cp "$full" "$table" ;;
esac
common=(--results "$table" --spec "$spec" --ties 0.02)
for seed in 1 2 3; do
  "$kopt" heuristic eval "${common[@]}" --features "$features" --holdout-seeded 0.3 --seed "$seed" \
    --misses 10 >"$out/heldout_seed$seed.txt"
done
"$kopt" heuristic eval "${common[@]}" --features "$features" --holdout-frac 0.2 >"$out/folds5.txt"
"$kopt" heuristic fit "${common[@]}" --features "$features" --out "$out/heuristic.json" \
  >"$out/fit.txt"
"$kopt" heuristic eval "${common[@]}" --heuristic "$out/heuristic.json" >"$out/in_sample.txt"
python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["heuristic"], open(sys.argv[2], "w"))' \
  "$spec" "$out/current.json"
"$kopt" heuristic eval "${common[@]}" --heuristic "$out/current.json" >"$out/current.txt"
rm "$table"
grep -H -E '^(match vs|geomean slowdown)' "$out"/*.txt
