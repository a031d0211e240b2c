# Kernel time under ncu (--clock-control none) of cuBLASLt and of 17 (heuristic's instance) on the 7 M >= 2048 shapes of configs.csv, one shape per ncu run.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o31; mkdir -p $O/lt $O/k; B=/tmp/b31; mkdir -p $B
export PATH=$PATH:/usr/local/cuda/bin
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; ncu --version | tail -1; } > $O/machine.txt; cat $O/machine.txt
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I $R/.device-carry/x21 -I $E $E/bench/standalone.cu -o $B/k17 > $O/build_k17.log 2>&1 &
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $E/bench/anchor.cu -lcublasLt -o $B/anchor > $O/build_anchor.log 2>&1 &
wait; echo "builds $(( $(date +%s) - start )) s"
[ -x $B/k17 ] && [ -x $B/anchor ] || { tar -C /tmp -czf $OUT/o31.tgz o31; exit 1; }
timeout 200 $B/anchor $R/.device-carry/big2048.csv --repeat 20 --csv $O/anchor.csv > $O/anchor.log 2>&1; echo "anchor rc=$?"
M=gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum
tail -n +2 $R/.device-carry/big2048.csv | while IFS=, read m n k; do
  printf 'M,N,K\n%s,%s,%s\n' $m $n $k > $B/one.csv
  ncu --clock-control none --metrics $M --csv $B/anchor $B/one.csv --repeat 3 > $O/lt/${m}_${n}_${k}.csv 2>/dev/null
  ncu --clock-control none --metrics $M --csv -k regex:gemm_a8w8 $B/k17 --sweep $B/one.csv --repeat 3 > $O/k/${m}_${n}_${k}.csv 2>/dev/null
done
echo "ncu: $(( $(date +%s) - start )) s"
tar -C /tmp -czf $OUT/o31.tgz o31
