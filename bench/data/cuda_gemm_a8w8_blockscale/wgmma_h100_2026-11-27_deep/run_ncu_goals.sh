# The committed tools: device_wgmma.sh prep for 17, then ncu_goals.sh 17 with two passes.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o32; mkdir -p $O
start=$(date +%s)
( cd $E/bench && OUT=$O KOPT_WG_CANDS="17" KOPT_WG_TORCH=0 bash device_wgmma.sh prep > $O/prep.txt 2>&1 )
grep -E 'check|anchor:|nvcc builds' $O/prep.txt | head
echo "prep: $(( $(date +%s) - start )) s"
OUT=$O timeout $(( 575 - ($(date +%s) - start) )) bash $E/bench/ncu_goals.sh 17 2 > $O/ncu_goals_17.txt 2>&1; echo "ncu_goals 17 rc=$? $(( $(date +%s) - start )) s"
tail -3 $O/ncu_goals_17.txt
cp /tmp/kopt-wg/ncu_goals_picks.csv /tmp/kopt-wg/ptxas_17.log $O/ 2>/dev/null
tar -C /tmp -czf $OUT/o32.tgz o32
