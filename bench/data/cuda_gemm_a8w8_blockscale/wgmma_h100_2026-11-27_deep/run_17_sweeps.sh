# 16 and 17 side by side: standalone builds, --check, the cuBLASLt anchor, sweeps in both orders.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o28a; mkdir -p $O/a $O/b $O/c
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
( cd $E/bench && OUT=$O KOPT_WG_CANDS="16 17" KOPT_WG_TORCH=0 bash device_wgmma.sh prep > $O/prep.txt 2>&1 )
grep -E 'check|anchor:|nvcc builds' $O/prep.txt | head -30
echo "prep: $(( $(date +%s) - start )) s"
( cd $E/bench && OUT=$O/a bash device_wgmma.sh sweep 20 16 17; OUT=$O/b bash device_wgmma.sh sweep 20 17 16; OUT=$O/c bash device_wgmma.sh sweep 20 16 17 )
echo "sweeps: $(( $(date +%s) - start )) s"
python3 $E/bench/goals.py $O/anchor.csv $O/a/sweep_16.csv $O/a/sweep_17.csv $O/b/sweep_17.csv $O/b/sweep_16.csv $O/c/sweep_16.csv $O/c/sweep_17.csv
cp /tmp/kopt-wg/*.log $O/ 2>/dev/null
tar -C /tmp -czf $OUT/o28a.tgz o28a
echo "total: $(( $(date +%s) - start )) s"
