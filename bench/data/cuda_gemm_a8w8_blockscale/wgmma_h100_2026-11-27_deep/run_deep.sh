# Deep decode pipelines (16x64 with 4-16 stages, 16x128_s8) x forced splits (0 = 16's rule), M <= 16 shapes.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o27; mkdir -p $O; B=/tmp/b27; mkdir -p $B
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } > $O/machine.txt
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -I $R/.device-carry/x19 -I $E $E/bench/standalone.cu -o $B/x19 > $O/build_x19.log 2>&1 &
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $E/bench/anchor.cu -lcublasLt -o $B/anchor > $O/build_anchor.log 2>&1 &
wait
echo "builds $(( $(date +%s) - start )) s"; grep -i error $O/build_*.log | head -20
[ -x $B/x19 ] || { echo "build failed"; tar -C /tmp -czf $OUT/o27.tgz o27; exit 1; }
timeout 120 $B/x19 --check > $O/check.log 2>&1; echo "check rc=$? $(tail -1 $O/check.log)"; grep "^  " $O/check.log | head
KOPT_X_SPLITS=1 timeout 120 $B/x19 --check > $O/check1.log 2>&1; echo "check split1 rc=$? $(tail -1 $O/check1.log)"
timeout 200 $B/anchor $R/.device-carry/dec16.csv --repeat 20 --csv $O/anchor.csv > $O/anchor.log 2>&1; echo "anchor rc=$?"
run() { # tag splits
  KOPT_X_SPLITS=$2 timeout 200 $B/x19 --sweep $R/.device-carry/dec16.csv --repeat 20 --csv $O/sweep_$1.csv > $O/sweep_$1.log 2>&1
  echo "sweep $1 rc=$? $(tail -1 $O/sweep_$1.log) t=$(( $(date +%s) - start ))"
}
run a_auto 0; run a_s1 1; run a_s2 2; run a_s3 3; run a_s4 4
run b_s4 4; run b_s3 3; run b_s2 2; run b_s1 1; run b_auto 0
run c_auto 0; run c_s1 1; run c_s2 2
timeout 200 $B/anchor $R/.device-carry/dec16.csv --repeat 20 --csv $O/anchor2.csv > $O/anchor2.log 2>&1; echo "anchor2 rc=$?"
tar -C /tmp -czf $OUT/o27.tgz o27
echo "total: $(( $(date +%s) - start )) s"
