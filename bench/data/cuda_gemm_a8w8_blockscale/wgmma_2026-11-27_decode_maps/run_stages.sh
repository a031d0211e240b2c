# Decode stage map: 16's decode kernel (x17b = 16 + forced-split knob, unset) with 2-6 stages, M <= 64 shapes, 3 passes.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale; X=$R/.device-carry/x17b
O=/tmp/o23; mkdir -p $O; B=/tmp/b23; mkdir -p $B
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } > $O/machine.txt
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -I $X -I $E $E/bench/standalone.cu -o $B/x17b > $O/build.log 2>&1
echo "build rc=$? $(( $(date +%s) - start )) s"; tail -3 $O/build.log
timeout 120 $B/x17b --check > $O/check.log 2>&1; echo "check rc=$? $(tail -1 $O/check.log)"
[ -x /tmp/b22/anchor ] && timeout 200 /tmp/b22/anchor $R/.device-carry/dec64.csv --repeat 20 --csv $O/anchor.csv > $O/anchor.log 2>&1; echo "anchor rc=$?"
for pass in a b c; do
  timeout 200 $B/x17b --sweep $R/.device-carry/dec64.csv --repeat 20 --csv $O/sweep_${pass}_s0.csv > $O/sweep_${pass}.log 2>&1
  echo "sweep $pass rc=$? $(tail -1 $O/sweep_${pass}.log) t=$(( $(date +%s) - start ))"
done
tar -C /tmp -czf $OUT/o23.tgz o23
echo "total: $(( $(date +%s) - start )) s"
