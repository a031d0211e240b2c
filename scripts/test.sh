#!/usr/bin/env bash
# The test command: installs missing packages, builds kopt with its tests, runs every test, then
# the unit and bad-input tests again on a sanitized build, then every fuzz target briefly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
build=${KOPT_TEST_BUILD_DIR:-$root/build-test}
jobs=$(nproc)
# ccache keys on the compile line: kopt's own builds below take the tree's root as the base
# folder (and leave the build folder out of the key), so a clone in another folder finds the
# objects an earlier run compiled. Not the tests: e2e.package compiles kopt once more at
# configure time in a folder of its own, and finds this run's objects by their full paths.
relative_cache=(env "CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}" "CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}")
# Release through ccache: the add_subdirectory case of e2e.package builds the kopt tool once more
# at configure time (Release, through ccache when installed), and then finds every object in
# the cache instead of compiling kopt a second time.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
"${relative_cache[@]}" cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"

# Then one clang build under AddressSanitizer and UndefinedBehaviorSanitizer (any finding
# aborts its test) with libFuzzer's coverage: the library, the CLI and the unit tests run again
# in it, with the end-to-end tests that feed kopt's readers bad or damaged input; then fuzz.smoke
# runs each libFuzzer target of kopt's readers (tests/fuzz) for KOPT_TEST_FUZZ_SECONDS (default
# 15), two at once, over its seeds, and fails on any crash, contract break (an exception other
# than kopt::Error, or an error naming no input) or input over 10 s. One build for both: clang
# compiles this code about 1.5 times as fast as g++ under the sanitizers (at -O1), and the
# fuzz targets need the library compiled by clang. Skipped when the run above was given ctest
# arguments (a focused run); KOPT_TEST_SANITIZE=0 skips the sanitized tests, KOPT_TEST_FUZZ=0
# the fuzz targets.
sanitize=${KOPT_TEST_SANITIZE:-1} fuzz=${KOPT_TEST_FUZZ:-1}
if [ "$#" -eq 0 ] && { [ "$sanitize" != 0 ] || [ "$fuzz" != 0 ]; }; then
  sanitized=${KOPT_TEST_SANITIZE_DIR:-$root/build-sanitize}
  cmake -S "$root" -B "$sanitized" -G Ninja -DCMAKE_BUILD_TYPE= \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DKOPT_SANITIZE=ON -DKOPT_FUZZ=ON \
    -DKOPT_FUZZ_SMOKE_SECONDS="${KOPT_TEST_FUZZ_SECONDS:-15}" -DKOPT_FUZZ_SMOKE_JOBS="$jobs"
  "${relative_cache[@]}" cmake --build "$sanitized" -j "$jobs"
  if [ "$sanitize" != 0 ]; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir "$sanitized" --output-on-failure -j "$jobs" \
      -R '^(unit\.|e2e\.(bad_input|bad_state|import|capture|inputs)$)'
  fi
  if [ "$fuzz" != 0 ]; then
    ctest --test-dir "$sanitized" --output-on-failure -L fuzz
  fi
fi
