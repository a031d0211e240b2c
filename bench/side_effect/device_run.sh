#!/usr/bin/env bash
# The keep test's side effect on a GPU machine, in one call per step:
#   bash bench/side_effect/device_run.sh kopt   # build and install kopt from this tree
#   bash bench/side_effect/device_run.sh aa     # A/As of the blockscale family's baseline:
#        KOPT_AA_N1 (30) decisions with every config in one class, then KOPT_AA_N4 (20) with its
#        four classes
#   bash bench/side_effect/device_run.sh spin   # cuda_spin's known effects, KOPT_SPIN_N (20) each
#   bash bench/side_effect/device_run.sh sol    # the blockscale BEST's speed of light per class
#   bash bench/side_effect/device_run.sh cheats # the CUDA cheat suites through the user's flow
# Steps chain: `device_run.sh kopt aa` builds kopt, then runs the A/As.
# kopt is built with KOPT_DEPS=<prefix holding include/{nlohmann,CLI,xxhash.h} and
# share/cmake/{nlohmann_json,CLI11}> into .device/kopt (kept between calls on one machine).
# Results go to $OUT/<step>/; bench/side_effect/rounds.py reads the A/As' samples.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/kopt-out}
prefix=$root/.device/kopt
export PATH=$PATH:/usr/local/cuda/bin
for step in "$@"; do
mkdir -p "$out/$step"
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } \
  >"$out/$step/machine.txt" 2>&1
case $step in
kopt)
  rm -rf "$root/.device/kopt-build"
  { cmake -S "$root" -B "$root/.device/kopt-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DKOPT_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="${KOPT_DEPS:?set KOPT_DEPS}" &&
    cmake --build "$root/.device/kopt-build" -j "$(nproc)" &&
    cmake --install "$root/.device/kopt-build" --prefix "$prefix" --strip; } >"$out/kopt/build.log" 2>&1 ||
    { tail -30 "$out/kopt/build.log"; exit 1; }
  ls -la "$prefix/bin" "$prefix/lib" | tee -a "$out/kopt/build.log" ;;
aa)
  aa=$root/examples/cuda_gemm_a8w8_blockscale/bench/aa.sh
  OUT=$out/aa/one KOPT_AA_WORK=/tmp/kopt-aa-one KOPT_AA_ONE_CLASS=1 KOPT_PREFIX=$prefix \
    bash "$aa" "${KOPT_AA_N1:-30}" >"$out/aa/one.log" 2>&1
  OUT=$out/aa/four KOPT_AA_WORK=/tmp/kopt-aa-four KOPT_PREFIX=$prefix \
    bash "$aa" "${KOPT_AA_N4:-20}" >"$out/aa/four.log" 2>&1
  for f in one four; do echo "== $f"; tail -n +2 "$out/aa/$f/aa.csv" | cut -d, -f1-6; done ;;
spin)
  OUT=$out/spin KOPT_PREFIX=$prefix KOPT_CALIBRATION_WORK=/tmp/kopt-spin \
    bash "$root/bench/calibration/run.sh" "$root/examples/cuda_spin" "${KOPT_SPIN_N:-20}" >"$out/spin/run.log" 2>&1
  cat "$out/spin/summary.txt" ;;
sol)
  OUT=$out/sol KOPT_AA_WORK=/tmp/kopt-sol KOPT_PREFIX=$prefix \
    bash "$root/examples/cuda_gemm_a8w8_blockscale/bench/aa.sh" 2 >"$out/sol/aa.log" 2>&1
  fam=(--spec /tmp/kopt-sol/src/family.json
       --state-dir /tmp/kopt-sol/build/kopt/cuda_gemm_a8w8_blockscale)
  { "$prefix/bin/kopt" decide "${fam[@]}" --candidate 17; "$prefix/bin/kopt" decide "${fam[@]}" --candidate 90; } \
    >"$out/sol/decide.txt" 2>&1
  cat "$out/sol/decide.txt" ;;
cheats)
  for f in cuda_spin cuda_gemm_a8w8_blockscale; do
    OUT=$out/cheats KOPT_PREFIX=$prefix KOPT_CHEATS_WORK=/tmp/kopt-cheats \
      bash "$root/bench/cheats/run.sh" "$root/examples/$f" "$root/tests/fixtures/cheats/$f" \
      >"$out/cheats/$f.log" 2>&1
    cat "$out/cheats/cheats_$f.csv"
  done ;;
esac
# One archive per step (the device returns few files), its summaries beside it.
tar czf "$out/$step.tgz" -C "$out" "$step" &&
  find "$out/$step" -mindepth 1 -type d -exec rm -rf {} +
done
