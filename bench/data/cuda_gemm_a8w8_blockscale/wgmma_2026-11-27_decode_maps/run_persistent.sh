# Persistent decode (x18) against 16's decode kernel (x17 with no forced split), M <= 64 shapes.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o24; mkdir -p $O; B=/tmp/b24; mkdir -p $B
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } > $O/machine.txt
for x in x17 x18; do
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -I $R/.device-carry/$x -I $E $E/bench/standalone.cu -o $B/$x > $O/build_$x.log 2>&1 &
done
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $E/bench/anchor.cu -lcublasLt -o $B/anchor > $O/build_anchor.log 2>&1 &
wait
echo "builds $(( $(date +%s) - start )) s"; grep -i error $O/build_*.log | head -20
for x in x18; do timeout 120 $B/$x --check > $O/check_$x.log 2>&1; echo "check $x rc=$? $(tail -1 $O/check_$x.log)"; grep "^  " $O/check_$x.log | head; done
KOPT_X_PER_SM=1 timeout 120 $B/x18 --check > $O/check_x18_1.log 2>&1; echo "check x18 per_sm 1 rc=$? $(tail -1 $O/check_x18_1.log)"
timeout 200 $B/anchor $R/.device-carry/dec64.csv --repeat 20 --csv $O/anchor.csv > $O/anchor.log 2>&1; echo "anchor rc=$?"
run() { # tag binary per_sm
  KOPT_X_PER_SM=$3 timeout 200 $B/$2 --sweep $R/.device-carry/dec64.csv --repeat 20 --csv $O/sweep_$1.csv > $O/sweep_$1.log 2>&1
  echo "sweep $1 rc=$? $(tail -1 $O/sweep_$1.log) t=$(( $(date +%s) - start ))"
}
[ -x $B/x18 ] && [ -x $B/x17 ] || { echo "build failed"; tar -C /tmp -czf $OUT/o24.tgz o24; exit 1; }
run a_16 x17 0; run a_p x18 0; run a_p1 x18 1; run a_p2 x18 2
run b_p2 x18 2; run b_p1 x18 1; run b_p x18 0; run b_16 x17 0
run c_16 x17 0; run c_p x18 0; run c_p1 x18 1
tar -C /tmp -czf $OUT/o24.tgz o24
echo "total: $(( $(date +%s) - start )) s"
