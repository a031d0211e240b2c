#!/usr/bin/env bash
# Several GPUs on one host: four candidates' benchmarks through `ctest -j 2 --resource-spec-file
# <kopt resources output>` against `ctest -j 1`, on a copy of this family with two extra
# candidates (03 = 01, 04 = 02 under new ids). Every harness run goes through a LAUNCHER that
# logs its start, end and ctest's GPU; nvidia-smi samples the compute processes per GPU.
# Logs go to $OUT (8 files at most). Prints the wall times, the ratio and whether any GPU ever ran two benchmarks.
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/two_gpus.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")} # the install of kopt on PATH
[ -n "$prefix" ] || { echo "set KOPT_PREFIX=<a kopt install>, or put its bin/kopt on PATH" >&2; exit 2; }
out=${OUT:-/tmp/kopt-out}
work=${KOPT_WORK:-/tmp/kopt-two-gpus}
family=cuda_gemm_a8w8_blockscale
kopt=$prefix/bin/kopt
rm -rf "$work"
mkdir -p "$work" "$out"
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=index,uuid,name,driver_version --format=csv; ncu --version | tail -1; nproc; } >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

cp -r "$root/examples/$family" "$work/src"
for pair in 03:01 04:02; do
  id=${pair%%:*} from=${pair##*:}
  cp -r "$work/src/candidates/$from" "$work/src/candidates/$id"
  sed -i "s/\"id\": \"$from\"/\"id\": \"$id\"/" "$work/src/candidates/$id/candidate.json"
done
cat >"$work/log_run.sh" <<'SH'
#!/usr/bin/env bash
# Runs a harness command and appends "start end gpu rc command" to $KOPT_RUN_LOG.
start=$(date +%s.%N)
"$@"
rc=$?
echo "$start $(date +%s.%N) ${CTEST_RESOURCE_GROUP_0_GPUS:-none} $rc $*" >>"$KOPT_RUN_LOG"
exit $rc
SH
chmod +x "$work/log_run.sh"
export KOPT_RUN_LOG=$work/setup_runs.log

b=$work/build
state=(--spec "$work/src/family.json" --state-dir "$b/kopt/$family")
t=$(date +%s)
cmake -S "$work/src" -B "$b" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DKOPT_USE_CCACHE=OFF -DKOPT_LAUNCHER="$work/log_run.sh" >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
cmake --build "$b" -j "$(nproc)" >>"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "configure + build of 00-04: $(( $(date +%s) - t )) s"
t=$(date +%s)
"$kopt" bench "${state[@]}" --golden-only >"$out/golden.log" 2>&1 || { cat "$out/golden.log"; exit 1; }
echo "golden: $(( $(date +%s) - t )) s"
"$kopt" resources --out "$b/gpus.json"
cat "$b/gpus.json"

nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name --format=csv,noheader \
  -lms 250 >"$out/apps.csv" 2>&1 &
sampler=$!
# -j 2 first: anything warming up (page cache, clocks) then favours -j 1, not the ratio.
for j in 2 1; do
  export KOPT_RUN_LOG=$work/runs_j$j.log
  : >"$KOPT_RUN_LOG"
  t=$(date +%s.%N)
  ctest --test-dir "$b" -R '^candidate_0[1-4]\.bench$' -FA '.*' -j $j --timeout 240 \
    --resource-spec-file "$b/gpus.json" -V >"$out/ctest_j$j.log" 2>&1
  rc=$?
  echo "ctest -j $j: rc=$rc, $(python3 -c "print(round($(date +%s.%N) - $t, 1))") s"
  echo "$t $(date +%s.%N)" >"$work/wall_j$j.txt"
done
kill "$sampler"
grep -h "GPU gate" "$out"/ctest_j*.log
for id in 01 02 03 04; do
  python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(sys.argv[2], m.get('status'), m.get('measured_by'), m.get('device'))" \
    "$b/kopt/$family/results/$id/measurement.json" "$id" 2>&1
done
cp "$out/apps.csv" "$work/"
python3 "$root/examples/$family/bench/two_gpus_report.py" "$work" | tee "$out/report.txt"
# $OUT brings back 8 files at most: the launcher's logs travel inside the report.
cat "$work"/runs_j*.log "$work"/wall_j*.txt >>"$out/report.txt"
