# 17 with its tensor maps cached across launches (x20, KOPT_X_MAPCACHE=1) against 17 as it is (=0), M <= 16 shapes.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o29; mkdir -p $O; B=/tmp/b29; mkdir -p $B
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } > $O/machine.txt; cat $O/machine.txt
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I $R/.device-carry/x20 -I $E $E/bench/standalone.cu -o $B/x20 > $O/build_x20.log 2>&1 &
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $E/bench/anchor.cu -lcublasLt -o $B/anchor > $O/build_anchor.log 2>&1 &
wait
echo "builds $(( $(date +%s) - start )) s"; grep -i error $O/build_*.log | head
[ -x $B/x20 ] || { tar -C /tmp -czf $OUT/o29.tgz o29; exit 1; }
KOPT_X_MAPCACHE=1 timeout 120 $B/x20 --check > $O/check.log 2>&1; echo "check cached rc=$? $(tail -1 $O/check.log)"
timeout 200 $B/anchor $R/.device-carry/dec16.csv --repeat 20 --csv $O/anchor.csv > $O/anchor.log 2>&1; echo "anchor rc=$?"
run() { KOPT_X_MAPCACHE=$2 timeout 200 $B/x20 --sweep $R/.device-carry/dec16.csv --repeat 20 --csv $O/sweep_$1.csv > $O/sweep_$1.log 2>&1; echo "sweep $1 rc=$? $(tail -1 $O/sweep_$1.log)"; }
run a_17 0; run a_cache 1; run b_cache 1; run b_17 0; run c_17 0; run c_cache 1; run d_cache 1; run d_17 0
timeout 200 $B/anchor $R/.device-carry/dec16.csv --repeat 20 --csv $O/anchor2.csv > $O/anchor2.log 2>&1; echo "anchor2 rc=$?"
tar -C /tmp -czf $OUT/o29.tgz o29
echo "total: $(( $(date +%s) - start )) s"
