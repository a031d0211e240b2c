#!/usr/bin/env bash
# Installs the Debian packages kopt needs that this machine lacks (nothing when all are there).
set -euo pipefail
packages=(cmake ninja-build g++ ccache git python3 redis-server
          nlohmann-json3-dev doctest-dev libcli11-dev libxxhash-dev
          hipcc libamdhip64-dev # HIP 5.2 for tests/e2e/hip.sh: 26 packages, ~30 s (docs/AMD.md)
          chromium              # tests/e2e/report.sh opens kopt report's page headless
          universal-ctags       # tests/sizes.sh finds each function's first and last line
          clang-14 libclang-rt-14-dev) # libFuzzer and the sanitizers' runtimes: bench/fuzz/run.sh
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "kopt: installing missing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
