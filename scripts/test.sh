#!/usr/bin/env bash
# The test command: installs missing packages, builds kopt with its tests, runs every test, then
# the unit and bad-input tests again on a sanitized build, then every fuzz target briefly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
build=${KOPT_TEST_BUILD_DIR:-$root/build-test}
jobs=$(nproc)
# Release through ccache: the add_subdirectory case of e2e.package builds the kopt tool once more
# at configure time (Release, through ccache when installed), and then finds every object in
# the cache instead of compiling kopt a second time.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"

# Then the library, the CLI and the unit tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, with the end-to-end tests that feed kopt's readers bad or damaged
# input run against the sanitized kopt. Any finding aborts its test. Skipped when the run above
# was given ctest arguments (a focused run), or with KOPT_TEST_SANITIZE=0.
if [ "$#" -eq 0 ] && [ "${KOPT_TEST_SANITIZE:-1}" != 0 ]; then
  sanitized=${KOPT_TEST_SANITIZE_DIR:-$root/build-sanitize}
  # -O1 -g1, as the sanitizers' own docs advise: a file compiles in half the time of -O2 -g under
  # ASan and UBSan (61 s against 31 s for src/cli/tune.cpp with g++ 12), and reports keep their
  # function names and lines.
  cmake -S "$root" -B "$sanitized" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DKOPT_SANITIZE=ON
  cmake --build "$sanitized" -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$sanitized" --output-on-failure -j "$jobs" \
    -R '^(unit\.|e2e\.(bad_input|bad_state|import|capture|inputs)$)'
fi

# Last, with clang, the libFuzzer targets of kopt's readers (tests/fuzz) in a build of their own:
# fuzz.smoke runs each for KOPT_TEST_FUZZ_SECONDS (default 15) over its seeds and fails on any
# crash, contract break (an exception other than kopt::Error, or an error naming no input) or
# input over 10 s. Skipped like the sanitized pass, or with KOPT_TEST_FUZZ=0.
if [ "$#" -eq 0 ] && [ "${KOPT_TEST_FUZZ:-1}" != 0 ]; then
  fuzz=${KOPT_TEST_FUZZ_DIR:-$root/build-fuzz}
  cmake -S "$root" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
    -DCMAKE_CXX_COMPILER=clang++-14 -DKOPT_FUZZ=ON -DKOPT_BUILD_TESTS=OFF \
    -DKOPT_FUZZ_SMOKE_SECONDS="${KOPT_TEST_FUZZ_SECONDS:-15}"
  cmake --build "$fuzz" --target kopt_fuzzers -j "$jobs"
  ctest --test-dir "$fuzz" --output-on-failure -L fuzz
fi
