# An honest kernel that starts threads of its own, on a host family with `bench.pin_cpu: false`,
# is measured like any other under kopt's confinement: candidate 72 is candidate 01's kernel with
# the rows of C split between the calling thread and one std::thread joined before it returns,
# decided against BEST 00 on the small spec. Its runs are not pinned, they are confined, and its
# decision is a verdict on times (not failed).
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

copy_host_family
rm -rf "$family_src"/candidates/0[2-9] "$family_src/agent"
small_host_spec
# The family's spec with pin_cpu false: the host family as a user with threaded kernels sets it.
python3 - "$family_src/family.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["bench"]["pin_cpu"] = False
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
mkdir -p "$family_src/candidates/72"
echo '{"id": "72", "base": "01", "hypothesis": "two threads share the rows", "target": "global"}' \
  >"$family_src/candidates/72/candidate.json"
python3 - "$family_src/candidates/01/gemm_kernel.hpp" "$family_src/candidates/72/gemm_kernel.hpp" <<'PY'
import sys
text = open(sys.argv[1]).read().replace("void gemm_tiled(", "void gemm_rows(", 1)
text = text.replace("#pragma once\n", "#pragma once\n\n#include <thread>\n", 1)
text += """
/// Candidate 01's kernel on two threads: the first half of the rows of C here, the rest on a
/// thread joined before the call returns.
template <int TM, int TN, int TK> void gemm_tiled(const GemmArgs &g) {
  const std::int64_t half = g.M / 2;
  GemmArgs top = g, bottom = g;
  top.M = half;
  bottom.M = g.M - half;
  bottom.A = g.A + half * g.K;
  bottom.C = g.C + half * g.N;
  std::thread other([&] { gemm_rows<TM, TN, TK>(bottom); });
  if (top.M > 0) {
    gemm_rows<TM, TN, TK>(top);
  }
  other.join();
}
"""
open(sys.argv[2], "w").write(text)
PY
host_family_with_baseline candidate_00 candidate_72
"$KOPT" bench "${kopt_family[@]}" --candidate 72 >"$WORK/unpinned_bench.log" 2>&1 ||
  { cat "$WORK/unpinned_bench.log"; fail "kopt bench of candidate 72 (pin_cpu false)"; }
"$KOPT" decide "${kopt_family[@]}" --candidate 72 >"$WORK/unpinned_decide.log" 2>&1 || true
cat "$WORK/unpinned_decide.log"
expect_verdict "$state/results/72/decision.json" keep tie split regression
logs=("$state"/results/72/rounds/*-candidate-72/harness.log)
[ "${#logs[@]}" -ge 2 ] || fail "no rounds of candidate 72"
for log in "${logs[@]}"; do
  head -2 "$log" | grep -q "confined (" || { head -2 "$log"; fail "$log: not confined"; }
  head -2 "$log" | grep -q ", on CPU " && { head -2 "$log"; fail "$log: pinned with pin_cpu false"; }
  grep -q "harness: guarded " "$log" || { head -20 "$log"; fail "$log: the harness did not guard"; }
done
echo "candidate 72 (two threads, unpinned): $(json_get "$state/results/72/decision.json" verdict)"
