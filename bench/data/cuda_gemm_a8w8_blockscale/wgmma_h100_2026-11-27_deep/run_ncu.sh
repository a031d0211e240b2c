# ncu on cuBLASLt's kernels and 16's decode kernels for 6 M <= 16 shapes: names, grids, clusters, times.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o26; mkdir -p $O; B=/tmp/b25
export PATH=$PATH:/usr/local/cuda/bin
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
start=$(date +%s)
if [ ! -x $B/x19 ] || [ ! -x $B/anchor ]; then mkdir -p $B
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I $R/.device-carry/x19 -I $E $E/bench/standalone.cu -o $B/x19 &
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $E/bench/anchor.cu -lcublasLt -o $B/anchor &
  wait; fi
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__cluster_dim_z,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__waves_per_multiprocessor,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
ncu --clock-control none --metrics $M --csv $B/anchor $R/.device-carry/ncu6.csv --repeat 3 > $O/ncu_lt.csv 2> $O/ncu_lt.err; echo "ncu lt rc=$?"
KOPT_X_GEMV=0 ncu --clock-control none --metrics $M --csv -k regex:gemm_a8w8 $B/x19 --sweep $R/.device-carry/ncu6.csv --repeat 3 > $O/ncu_16.csv 2> $O/ncu_16.err; echo "ncu 16 rc=$?"
KOPT_X_GEMV=16 KOPT_X_U=2 ncu --clock-control none --metrics $M --csv -k regex:gemm_a8w8 $B/x19 --sweep $R/.device-carry/ncu6.csv --repeat 3 > $O/ncu_gemv.csv 2> $O/ncu_gemv.err; echo "ncu gemv rc=$?"
tar -C /tmp -czf $OUT/o26.tgz o26
echo "total: $(( $(date +%s) - start )) s"
