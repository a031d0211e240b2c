# Decode GEMV (x19) against 16's decode kernel (x19 with KOPT_X_GEMV=0), the M <= 16 shapes.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o25; mkdir -p $O; B=/tmp/b25; mkdir -p $B
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } > $O/machine.txt
cat $O/machine.txt
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -I $R/.device-carry/x19 -I $E $E/bench/standalone.cu -o $B/x19 > $O/build_x19.log 2>&1 &
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $E/bench/anchor.cu -lcublasLt -o $B/anchor > $O/build_anchor.log 2>&1 &
wait
echo "builds $(( $(date +%s) - start )) s"; grep -i error $O/build_*.log | head -20
[ -x $B/x19 ] || { echo "build failed"; tar -C /tmp -czf $OUT/o25.tgz o25; exit 1; }
for u in 4 2; do KOPT_X_U=$u timeout 120 $B/x19 --check > $O/check_u$u.log 2>&1; echo "check u$u rc=$? $(tail -1 $O/check_u$u.log)"; grep "^  " $O/check_u$u.log | head; done
timeout 200 $B/anchor $R/.device-carry/dec16.csv --repeat 20 --csv $O/anchor.csv > $O/anchor.log 2>&1; echo "anchor rc=$?"
run() { # tag U warps_per_sm (0: 16's kernel)
  KOPT_X_U=$2 KOPT_X_GEMV=$3 timeout 200 $B/x19 --sweep $R/.device-carry/dec16.csv --repeat 20 --csv $O/sweep_$1.csv > $O/sweep_$1.log 2>&1
  echo "sweep $1 rc=$? $(tail -1 $O/sweep_$1.log) t=$(( $(date +%s) - start ))"
}
run a_16 4 0; run a_u4w8 4 8; run a_u4w16 4 16; run a_u2w16 2 16; run a_u2w32 2 32
run b_u2w32 2 32; run b_u2w16 2 16; run b_u4w16 4 16; run b_u4w8 4 8; run b_16 4 0
run c_16 4 0; run c_u4w16 4 16; run c_u2w32 2 32
tar -C /tmp -czf $OUT/o25.tgz o25
echo "total: $(( $(date +%s) - start )) s"
