# 17 (two-way splits -> one deep CTA) against 16: standalone sweeps, then the kopt loop for 17 on
# the ledger 00-16 (restored) after `kopt rebase`; kopt analyze of 17 if time is left.
set -u
R=$(pwd); E=$R/examples/cuda_gemm_a8w8_blockscale
O=/tmp/o28b; mkdir -p $O/a $O/b
export PATH=$PATH:/usr/local/cuda/bin
start=$(date +%s)
bash .device-carry/kopt_build.sh $O > $O/kb.txt 2>&1 &
kb=$!
( cd $E/bench && OUT=$O KOPT_WG_CANDS="16 17" KOPT_WG_TORCH=0 bash device_wgmma.sh prep > $O/prep.txt 2>&1 )
grep -E 'check|anchor:|nvcc builds' $O/prep.txt | head -30
( cd $E/bench && OUT=$O/a bash device_wgmma.sh sweep 20 16 17; OUT=$O/b bash device_wgmma.sh sweep 20 17 16 )
python3 $E/bench/goals.py $O/anchor.csv $O/a/sweep_16.csv $O/a/sweep_17.csv $O/b/sweep_17.csv $O/b/sweep_16.csv
echo "prep + sweeps: $(( $(date +%s) - start )) s"
wait $kb; cat $O/kb.txt
L=/tmp/kopt-ledger28; mkdir -p $L/kopt/cuda_gemm_a8w8_blockscale
tar -C $L/kopt/cuda_gemm_a8w8_blockscale -xzf .device-carry/ledger16.tgz results ledger
rm -f $L/kopt/cuda_gemm_a8w8_blockscale/ledger/ledger.lock
OUT=$O KOPT_PREFIX=/tmp/kopt-inst KOPT_LOOP_BUILD=$L KOPT_LOOP_IDS="17" KOPT_LOOP_ANALYZE=${ANA-17} \
  KOPT_LOOP_REBASE="heuristic arm 32x64_s4 for M <= 64, N <= 1536 (family.json, after 16 was kept)" \
  timeout $(( 570 - ($(date +%s) - start) )) bash $E/bench/kopt_loop.sh > $O/loop.txt 2>&1
echo "loop rc=$? $(( $(date +%s) - start )) s"
grep -E 'rc=|took|rebase' $O/loop.txt | head; cat $O/decide.log
cp $L/kopt/cuda_gemm_a8w8_blockscale/ledger/* $O/ 2>/dev/null
cp /tmp/kopt-wg/*.log $O/ 2>/dev/null
tar -C /tmp -czf $OUT/o28b.tgz o28b
echo "total: $(( $(date +%s) - start )) s"
