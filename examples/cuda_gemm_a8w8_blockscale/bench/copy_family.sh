# Sourced by the device scripts: a copy of this family under $work with candidate 90, the
# baseline (the candidate without base: 17 since the landing, 00 before) plus one comment line
# (same machine code, another content hash), configured and built with the kopt install at
# $prefix; bench.rounds/repeat set when given. Logs go to $out. Sets `baseline` to the id.
# KOPT_AA_CODE=NN: the family's own editable files are first replaced by candidate NN's, so that
# the baseline and candidate 90 both run NN's code (the A/A of another candidate; a tree from
# before the landing holds 00-16). KOPT_AA_ONE_CLASS=1 puts every config in one class (the
# exposure of a family with one class, or of a target class).
#   copy_family ROOT WORK PREFIX OUT [ROUNDS] [REPEAT]
copy_family() {
  local root=$1 work=$2 prefix=$3 out=$4 rounds=${5:-} repeat=${6:-}
  local family=cuda_gemm_a8w8_blockscale
  for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
  export PATH=$PATH:/usr/local/cuda/bin
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
    ncu --version | tail -1; } >"$out/machine.txt" 2>&1
  rm -rf "$work" && mkdir -p "$work"
  cp -r "$root/examples/$family" "$work/src"
  if [ -n "${KOPT_AA_CODE:-}" ]; then
    local from="$work/src/candidates/$KOPT_AA_CODE"
    [ -d "$from" ] || { echo "KOPT_AA_CODE=$KOPT_AA_CODE: no folder $from" >&2; return 1; }
    find "$from" -maxdepth 1 -type f ! -name candidate.json -exec cp {} "$work/src/" \;
    echo "the family's own files are candidate $KOPT_AA_CODE's: $(ls "$from" | tr '\n' ' ')"
  fi
  python3 - "$work/src/family.json" "$rounds" "$repeat" <<'PY'
import json, os, sys
path, rounds, repeat = sys.argv[1:4]
spec = json.load(open(path))
if rounds: spec["bench"]["rounds"] = int(rounds)
if repeat: spec["bench"]["repeat"] = int(repeat)
if os.environ.get("KOPT_AA_ONE_CLASS"):
    spec["classes"] = {"columns": ["M"], "buckets": {"M": [1000000]}}
    print("classes:", spec["classes"])
json.dump(spec, open(path, "w"), indent=2)
print("bench:", spec["bench"])
PY
  baseline=$(cd "$work/src/candidates" && grep -L '"base"' -- */candidate.json | head -1 | cut -d/ -f1)
  [ -n "$baseline" ] || { echo "no baseline candidate (one without base) in $work/src/candidates" >&2; return 1; }
  mkdir -p "$work/src/candidates/90"
  echo '{"id": "90", "base": "'"$baseline"'", "hypothesis": "A/A: the baseline plus one comment line", "target": "global"}' \
    >"$work/src/candidates/90/candidate.json"
  { cat "$work/src/gemm_kernel.cuh"; echo "// A/A: this comment changes the content hash, not the code"; } \
    >"$work/src/candidates/90/gemm_kernel.cuh"
  cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DKOPT_USE_CCACHE=OFF >"$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; return 1; }
  cmake --build "$work/build" --target "candidate_$baseline" candidate_90 -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; return 1; }
}
