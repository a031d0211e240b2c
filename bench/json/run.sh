#!/usr/bin/env bash
# What kopt's JSON pre-scans (nesting depth, duplicate keys, with file:line:col) cost beside
# nlohmann's parse alone and beside a parse whose callback checks the same (no positions):
#   bash bench/json/run.sh BUILD_DIR FILE.json   (BUILD_DIR: a Release build of kopt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR FILE.json} file=${2:?usage: run.sh BUILD_DIR FILE.json}
g++ -O2 -std=c++20 -I"$here/../../src" "$here/prescan_cost.cpp" "$build/src/libkopt_lib.a" \
  "$build/harness/libkopt_harness.a" -o "$build/prescan_cost"
"$build/prescan_cost" "$file"
