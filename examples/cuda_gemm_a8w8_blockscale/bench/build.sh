#!/usr/bin/env bash
# Builds bench/standalone.cu for candidates 00, 01 and 02 into $1 (default build-cuda under the
# repo root), with the instance list taken from family.json.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/../../build-cuda}
mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
python3 - "$here/family.json" "$out/instances.inc" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    for i in spec["instances"]:
        f.write("X(%d, %d, %d, %d, %d)\n" % (i["BM"], i["BN"], i["WM"], i["WN"], i["STAGES"]))
PY
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -I "$out")
"$nvcc" "${flags[@]}" -I "$here" "$here/bench/standalone.cu" -o "$out/standalone_00" \
  > "$out/ptxas_00.log" 2>&1 &
"$nvcc" "${flags[@]}" -I "$here/candidates/01" -I "$here" "$here/bench/standalone.cu" \
  -o "$out/standalone_01" > "$out/ptxas_01.log" 2>&1 &
"$nvcc" "${flags[@]}" -DFORCE_STAGES=1 -I "$here/candidates/01" -I "$here" \
  "$here/bench/standalone.cu" -o "$out/standalone_02" > "$out/ptxas_02.log" 2>&1 &
status=0
for job in $(jobs -p); do wait "$job" || status=1; done
if [ $status -ne 0 ]; then grep -h -i "error" "$out"/ptxas_0*.log | head -40; exit 1; fi
echo "built $out/standalone_00 _01 _02"
