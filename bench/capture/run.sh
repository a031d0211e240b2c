#!/usr/bin/env bash
# Capture's cost in dispatch: builds dispatch_bench.cpp without capture and with it, runs each
# 5 times interleaved (capture compiled in and off, compiled in and on), prints the medians.
#   bash bench/capture/run.sh [calls]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
calls=${1:-200000000}
for c in 0 1; do
  g++ -std=c++17 -O2 -DKOPT_BENCH_CAPTURE=$c -I"$src" "$here/dispatch_bench.cpp" -o "$tmp/b$c" -pthread
done
for run in 1 2 3 4 5; do
  echo "none $("$tmp/b0" "$calls")"
  echo "off  $(env -u KOPT_CAPTURE "$tmp/b1" "$calls")"
  echo "on   $(KOPT_CAPTURE="$tmp/cap.csv" "$tmp/b1" "$calls")"
done | tee "$tmp/all.txt"
for v in none off on; do
  med=$(grep "^$v " "$tmp/all.txt" | awk '{print $4}' | sort -g | sed -n 3p)
  echo "median $v: $med ns/call"
done
echo "capture file of the last 'on' run:"; cat "$tmp/cap.csv"
