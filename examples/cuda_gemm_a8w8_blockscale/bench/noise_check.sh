#!/usr/bin/env bash
# Are a sweep's slow rows reproducible? Runs candidate 01's harness directly (`--kernel`) on three
# (N,K) pairs x the 36-value M grid with three kernels, twice at warmup 1 and twice at warmup 25,
# interleaved, then prints the spread of identical-work neighbours (two M with the same number of
# M tiles) and run to run, per warm-up. GPU clocks are sampled every 100 ms to $OUT/clocks.csv.
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/noise_check.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
prefix=${KOPT_PREFIX:?KOPT_PREFIX=<a kopt install>}
out=${OUT:-/tmp/kopt-noise}
b=${KOPT_NOISE_BUILD:-/tmp/kopt-noise-build}
kernels=(a8w8_bs_16x64_w1x4_s6 a8w8_bs_32x64_w2x2_s4 a8w8_bs_16x64_w1x4_s4)
mkdir -p "$out/runs"
export PATH=$PATH:/usr/local/cuda/bin
cmake -S "$root/examples/cuda_gemm_a8w8_blockscale" -B "$b" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DKOPT_USE_CCACHE=OFF >"$out/configure.log" 2>&1 ||
  { tail "$out/configure.log"; exit 1; }
cmake --build "$b" --target candidate_01 -j "$(nproc)" >"$out/build.log" 2>&1 ||
  { tail "$out/build.log"; exit 1; }
bin=$b/kopt/cuda_gemm_a8w8_blockscale/bin/candidate_01
{
  echo "M,N,K"
  for nk in 8192,2048 4096,2048 10240,8192; do
    for m in 1 2 4 8 16 24 32 48 64 80 96 112 128 160 192 224 256 320 384 448 512 576 640 768 \
      896 1024 1280 1536 1792 2048 2560 3072 3584 4096 6144 8192; do echo "$m,$nk"; done
  done
} >"$out/configs.csv"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 100 \
  >"$out/clocks.csv" &
smi=$!
for rep in 1 2; do
  for w in 1 25; do
    for k in "${kernels[@]}"; do
      "$bin" --configs "$out/configs.csv" --benchmark --warmup "$w" --repeat 20 --kernel "$k" \
        --out "$out/runs/w${w}_${k}_r$rep.csv" >"$out/runs/w${w}_${k}_r$rep.log" 2>&1 ||
        echo "failed: warmup $w, $k, run $rep"
    done
  done
done
kill "$smi"
python3 - "$out/runs" "${kernels[@]}" <<'PY'
import csv, math, re, sys
runs, kernels = sys.argv[1], sys.argv[2:]
def load(path):
    return {(int(r["M"]), int(r["N"]), int(r["K"])): float(next(v for k, v in r.items() if k.startswith("us_")))
            for r in csv.DictReader(open(path))}
def q(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(p * len(v)))]
for w in (1, 25):
    same, again = [], []
    for k in kernels:
        bm = int(re.match(r"a8w8_bs_(\d+)x", k)[1])
        tables = [load(f"{runs}/w{w}_{k}_r{r}.csv") for r in (1, 2)]
        for t in tables:
            shapes = sorted(t, key=lambda s: (s[1], s[2], s[0]))
            for a, b in zip(shapes, shapes[1:]):
                if a[1:] == b[1:] and math.ceil(a[0] / bm) == math.ceil(b[0] / bm):
                    same.append(abs(math.log(t[b] / t[a])))
        again += [abs(math.log(tables[0][s] / tables[1][s])) for s in tables[0]]
    print(f"warmup {w}: identical work (n={len(same)}) p50 {q(same, .5):.4f} p90 {q(same, .9):.4f} "
          f"p99 {q(same, .99):.4f} max {max(same):.4f}; run to run (n={len(again)}) p50 "
          f"{q(again, .5):.4f} p90 {q(again, .9):.4f} p99 {q(again, .99):.4f} max {max(again):.4f}")
PY
tar czf "$out/runs.tgz" -C "$out" runs && rm -rf "$out/runs"
