# Decode split map: candidate 16's decode kernel with the split count forced (KOPT_X_SPLITS), M <= 64 shapes.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale; X=$R/.device-carry/x17
O=/tmp/o22; mkdir -p $O; B=/tmp/b22; mkdir -p $B
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } > $O/machine.txt
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo)
nvcc "${flags[@]}" -I $X -I $E $E/bench/standalone.cu -o $B/x17 > $O/build_x17.log 2>&1 &
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $E/bench/anchor.cu -lcublasLt -o $B/anchor > $O/build_anchor.log 2>&1 &
wait
echo "builds $(( $(date +%s) - start )) s"; tail -3 $O/build_x17.log
for s in 0 3 5 8; do KOPT_X_SPLITS=$s timeout 120 $B/x17 --check > $O/check_s$s.log 2>&1; echo "check s=$s rc=$? $(tail -1 $O/check_s$s.log)"; done
timeout 200 $B/anchor $R/.device-carry/dec64.csv --repeat 20 --csv $O/anchor.csv > $O/anchor.log 2>&1; echo "anchor rc=$?"
for pass in a b; do
  order="0 1 2 3 4 5 6 7 8"; [ $pass = b ] && order="8 7 6 5 4 3 2 1 0"
  for s in $order; do
    KOPT_X_SPLITS=$s timeout 200 $B/x17 --sweep $R/.device-carry/dec64.csv --repeat 20 --csv $O/sweep_${pass}_s$s.csv > $O/sweep_${pass}_s$s.log 2>&1
    echo "sweep $pass s=$s rc=$? $(tail -1 $O/sweep_${pass}_s$s.log) t=$(( $(date +%s) - start ))"
  done
done
tar -C /tmp -czf $OUT/o22.tgz o22
echo "total: $(( $(date +%s) - start )) s"
