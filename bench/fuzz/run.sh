#!/usr/bin/env bash
# bench/fuzz: every libFuzzer target of kopt's readers (tests/fuzz) for a time budget each, one
# after the other (or --jobs N at once, one fuzzing process each), then a table of what each did.
#
#   bash bench/fuzz/run.sh [seconds] [--build-dir DIR] [--targets a,b,...] [--jobs N]
#
# seconds: per target (default 20). 0 runs each target over its seed corpus once and stops (a
# regression run of the seeds and of every crash input kept in the corpus).
# The fuzz build (clang, -DKOPT_FUZZ=ON, ASan + UBSan) is configured and built in DIR (default
# build-fuzz/ in the repository) when needed. Seeds come from tests/fuzz/corpus/<target>; what
# libFuzzer finds goes to DIR/fuzz-corpus/<target>, crash inputs to DIR/fuzz-artifacts/<target>.
# Each input has 10 s (-timeout) and 2 GB (-rss_limit_mb): a hang or a runaway allocation is a
# crash too. Exit status 1 when any target crashed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=20
build=$root/build-fuzz
only=""
jobs=1
while [ $# -gt 0 ]; do
  case $1 in
  --build-dir) build=$2; shift 2 ;;
  --targets) only=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  [0-9]*) seconds=$1; shift ;;
  *) echo "usage: run.sh [seconds] [--build-dir DIR] [--targets a,b] [--jobs N]" >&2; exit 2 ;;
  esac
done
fuzz_src=$root/tests/fuzz
targets=$(sed -n '/^set(KOPT_FUZZ_TARGETS/,/)/p' "$fuzz_src/CMakeLists.txt" |
  sed 's/set(KOPT_FUZZ_TARGETS//; s/)//' | tr -s ' \n' '\n' | grep -v '^$')
[ -n "$only" ] && targets=$(tr ',' '\n' <<<"$only")

if [ ! -f "$build/CMakeCache.txt" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
    -DCMAKE_CXX_COMPILER=clang++-14 -DKOPT_FUZZ=ON -DKOPT_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
fi
cmake --build "$build" --target kopt_fuzzers -j "${JOBS:-$(nproc)}" >"$build/fuzz-build.log" 2>&1 ||
  { tail -40 "$build/fuzz-build.log"; echo "fuzz build failed (log: $build/fuzz-build.log)" >&2; exit 2; }

dict_of() { # JSON readers get the JSON tokens, the others the CSV and tool-output tokens
  case $1 in
  *_json | fileapi_reply | ledger_files) echo "$fuzz_src/json.dict" ;;
  *) echo "$fuzz_src/csv.dict" ;;
  esac
}

# One target: its row of the table goes to fuzz-logs/<target>.row; status 1 when it crashed.
fuzz_one() {
  local t=$1
  bin=$build/tests/fuzz/fuzz_$t
  seeds=$fuzz_src/corpus/$t
  corpus=$build/fuzz-corpus/$t
  artifacts=$build/fuzz-artifacts/$t
  log=$build/fuzz-logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  common=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "-dict=$(dict_of "$t")"
          "-artifact_prefix=$artifacts/")
  start=$(date +%s)
  if [ "$seconds" = 0 ]; then
    args=(-runs=0 "${common[@]}" "$seeds")
  else
    args=(-max_total_time="$seconds" "${common[@]}" "$corpus" "$seeds")
  fi
  rc=0
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" "${args[@]}" >"$log" 2>&1 || rc=$?
  took=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
  crashes=$(find "$artifacts" -type f -newermt "@$start" | wc -l)
  result=ok
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    result="CRASH (rc $rc, log $log)"
    grep -E 'contract broken|ERROR: (AddressSanitizer|libFuzzer)|runtime error|Test unit written' \
      "$log" | head -5 >&2 || true
  fi
  printf '%-16s %6s %12s %6s %7s %6s %8s  %s' "$t" "$took" "${execs:-?}" "${cov:-?}" \
    "${ft:-?}" "${corp:-?}" "$crashes" "$result" >"$build/fuzz-logs/$t.row"
  [ "$result" = ok ]
}

failed=0
running=0
for t in $targets; do
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done

printf '%-16s %6s %12s %6s %7s %6s %8s  %s\n' target seconds executions cov ft corpus crashes result
for t in $targets; do cat "$build/fuzz-logs/$t.row"; echo; done
exit $failed
