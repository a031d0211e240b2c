#!/usr/bin/env bash
# bench/compile: what time to baseline and each candidate cost to build (issue 7).
#
#   KOPT_PREFIX=<kopt install> bash bench/compile/run.sh [ck_like] [cuda]
#
# For each family (default: ck_like, plus cuda when nvcc is found) and each mode (ccache,
# noccache), in a fresh copy of the family and a fresh build folder (and an empty ccache):
#   cold      cmake --build --target candidate_00 (time to baseline), efficiency from the log
#   noop      the same again: no compile
#   one_tu    a new candidate 90 = 00 with one instance's template changed (the heaviest
#             instance of the cold run), via candidates/90/instances/<name>.in
#   best      candidate_01 (BEST in the examples' story), so that its objects are in the cache
#   identical a new candidate 91 = a copy of candidate 01's folder
#   cold_all  (COLD_ALL=1) every candidate, cold, in another fresh folder
# and the anchor: the naive build (all instances of 00 in one TU, no ccache, the compile
# command of one instance TU from compile_commands.json), rebuilt for every candidate.
# Each step's record goes to $OUT/compile.jsonl; report.py prints the table for docs/PERFORMANCE.md.
#
# Env: KOPT_PREFIX (default: the install of the kopt on PATH), JOBS (default nproc), OUT (default
# /tmp/kopt-bench-compile), WORK (scratch, default a new temp folder), MODES ("ccache noccache"),
# CCACHE (the ccache program), CUDA_ARCH (default 90a), COLD_ALL (0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")} # the install of kopt on PATH
[ -n "$prefix" ] || { echo "set KOPT_PREFIX=<a kopt install>, or put its bin/kopt on PATH" >&2; exit 2; }
kopt=${KOPT:-$prefix/bin/kopt}
jobs=${JOBS:-$(nproc)}
out=${OUT:-/tmp/kopt-bench-compile}
work=${WORK:-$(mktemp -d /tmp/kopt-bench-compile.XXXXXX)}
modes=${MODES:-ccache noccache}
arch=${CUDA_ARCH:-90a}
mkdir -p "$out"
results=$out/compile.jsonl
[[ -x $kopt ]] || { echo "bench/compile: no kopt at $kopt (set KOPT_PREFIX)" >&2; exit 1; }
export PATH=$PATH:/usr/local/cuda/bin

families=("$@")
if [[ ${#families[@]} -eq 0 ]]; then
  families=(ck_like)
  command -v nvcc >/dev/null && families+=(cuda)
fi

source_of() {
  case $1 in
  ck_like) echo "$here/ck_like" ;;
  cuda) echo "$root/examples/cuda_gemm_a8w8_blockscale" ;;
  *) echo "bench/compile: unknown family '$1' (ck_like, cuda)" >&2; exit 2 ;;
  esac
}
name_of() { case $1 in ck_like) echo ck_like ;; cuda) echo cuda_gemm_a8w8_blockscale ;; esac; }

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$(now)"; }

# step <family> <mode> <step> <build dir> <log> <cmake --build args...>: builds, times the
# command, and appends the record (build-report of the run, the command's wall time).
step() {
  local fam=$1 mode=$2 name=$3 dir=$4 log=$5
  shift 5
  local start wall
  start=$(now)
  cmake --build "$dir" -j "$jobs" "$@" >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
  wall=$(elapsed "$start")
  "$kopt" build-report "$dir" --jobs "$jobs" --json >"$log.report.json" 2>/dev/null ||
    echo '{}' >"$log.report.json"
  python3 "$here/record.py" --family "$fam" --mode "$mode" --step "$name" --jobs "$jobs" \
    --wall "$wall" --log "$log" --report "$log.report.json" ${STEP_EXTRA:-} >>"$results"
  tail -1 "$results"
}

configure() { # <family> <src> <build> <ccache ON|OFF> <log>
  local extra=()
  [[ $1 == cuda ]] && extra=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
  cmake -S "$2" -B "$3" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DKOPT_USE_CCACHE="$4" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${CCACHE:+-DKOPT_CCACHE_PROGRAM=$CCACHE} "${extra[@]}" \
    >"$5" 2>&1 || { tail -40 "$5"; exit 1; }
}

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "cores: $(nproc), jobs: $jobs"
  grep -m1 "model name" /proc/cpuinfo || true
  free -g | sed -n 2p
  ninja --version | sed 's/^/ninja /'
  "${CCACHE:-ccache}" --version 2>/dev/null | head -1 || echo "ccache: none"
  g++ --version | head -1
  command -v nvcc >/dev/null && nvcc --version | tail -2 | head -1
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

for fam in "${families[@]}"; do
  src=$(source_of "$fam")
  name=$(name_of "$fam")
  for mode in $modes; do
    use=ON
    [[ $mode == noccache ]] && use=OFF
    w=$work/$fam-$mode
    rm -rf "$w"
    mkdir -p "$w"
    cp -r "$src" "$w/family"
    export CCACHE_DIR=$w/ccache
    logs=$out/$fam-$mode
    mkdir -p "$logs"
    start=$(now)
    configure "$fam" "$w/family" "$w/build" "$use" "$logs/configure.log"
    echo "{\"family\": \"$fam\", \"mode\": \"$mode\", \"step\": \"configure\", \"cmd_wall_s\": $(elapsed "$start")}" >>"$results"

    step "$fam" "$mode" cold "$w/build" "$logs/cold.log" --target candidate_00
    step "$fam" "$mode" noop "$w/build" "$logs/noop.log" --target candidate_00

    # The heaviest instance of the cold run gets a changed template in candidate 90.
    heavy=$(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
print(max((t for t in r['tus'] if t['instance']), key=lambda t: t['seconds'])['instance'])" \
      "$logs/cold.log.report.json")
    template=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernel']['template'])" \
      "$w/family/family.json")
    mkdir -p "$w/family/candidates/90/instances"
    echo '{"id": "90", "base": "00", "hypothesis": "bench/compile: one instance changed", "target": "global"}' \
      >"$w/family/candidates/90/candidate.json"
    # A real code change (a ccache miss in direct and preprocessed mode), not a comment.
    { cat "$w/family/$template"; echo 'static_assert(sizeof(int) >= 2, "bench/compile variant of {{name}}");'; } \
      >"$w/family/candidates/90/instances/$heavy.in"
    STEP_EXTRA="--candidate 90 --changed $heavy" \
      step "$fam" "$mode" one_tu "$w/build" "$logs/one_tu.log" --target candidate_90

    # BEST in the examples' story is 01: built first, so that its objects are in the cache.
    STEP_EXTRA="--candidate 01" step "$fam" "$mode" best "$w/build" "$logs/best.log" --target candidate_01
    cp -r "$w/family/candidates/01" "$w/family/candidates/91"
    sed -i 's/"id": *"01"/"id": "91"/' "$w/family/candidates/91/candidate.json"
    STEP_EXTRA="--candidate 91" \
      step "$fam" "$mode" identical "$w/build" "$logs/identical.log" --target candidate_91

    if [[ ${COLD_ALL:-0} == 1 ]]; then
      export CCACHE_DIR=$w/ccache-all
      configure "$fam" "$w/family" "$w/build-all" "$use" "$logs/configure-all.log"
      step "$fam" "$mode" cold_all "$w/build-all" "$logs/cold_all.log"
    fi
  done

  # The anchor: every instance of candidate 00 in one TU, compiled once per candidate, no ccache,
  # with the command compile_commands.json gives one instance TU (the launcher is not in it).
  w=$work/$fam-${modes##* }
  python3 "$here/naive.py" --build "$w/build" --state "$w/build/kopt/$name" --candidate 00 \
    --family "$fam" --jobs "$jobs" --out "$out/$fam-naive.log" >>"$results"
  tail -1 "$results"
done
python3 "$here/report.py" "$results" | tee "$out/report.md"
