# An A/A on the host example through the user's flow: candidate 90 is the baseline 00 plus one
# comment line (the same code under another content hash), decided against BEST 00 three times
# (`cmake --build --target candidate_90_bench`, then `ctest -L keep`). Under the paired rule
# no decision may be a keep, a regression or a failure, and the regression counter stays 0.
# Every harness run of a decision runs on one CPU (a host family's runs are pinned).
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

copy_host_family
mkdir -p "$family_src/candidates/90"
echo '{"id": "90", "base": "00", "hypothesis": "A/A: the baseline plus one comment", "target": "global"}' \
  >"$family_src/candidates/90/candidate.json"
{ cat "$family_src/gemm_kernel.hpp"; echo "// A/A: a comment changes the content hash, not the code"; } \
  >"$family_src/candidates/90/gemm_kernel.hpp"

host_family_with_baseline candidate_00 candidate_90

for i in 1 2 3; do
  echo "--- A/A decision $i"
  cmake --build "$b" --target candidate_90_bench >"$WORK/bench.log" 2>&1 ||
    { cat "$WORK/bench.log"; fail "candidate_90_bench (decision $i)"; }
  if ctest --test-dir "$b" -L keep -R '^candidate_90\.' >"$WORK/keep.log" 2>&1; then
    cat "$WORK/keep.log"; fail "the keep test passed: an A/A was kept (decision $i)"
  fi
  "$KOPT" decide "${kopt_family[@]}" --candidate 90 >"$WORK/decide.log" 2>&1 || true
  cat "$WORK/decide.log"
  expect_verdict "$state/results/90/decision.json" tie split
  [ "$(json_get "$state/results/90/decision.json" method)" = paired ] ||
    fail "decision $i is not side by side"
  # Every run of both sides on one CPU, named in its log: one CPU per log, the same in all.
  logs=("$state"/results/90/rounds/*/harness.log)
  cpus=$(sed -n 's/^# exited with 0, .* s, on CPU \([0-9]*\)$/\1/p' "${logs[@]}")
  [ "${#logs[@]}" -ge 4 ] && [ "$(echo "$cpus" | wc -l)" = "${#logs[@]}" ] &&
    [ "$(echo "$cpus" | sort -u | wc -l)" = 1 ] ||
    { head -2 "${logs[@]}"; fail "decision $i: the runs are not pinned to one CPU"; }
  "$KOPT" record "${kopt_family[@]}" --candidate 90 >"$WORK/record.log" 2>&1 ||
    { cat "$WORK/record.log"; fail "record (decision $i)"; }
done
[ "$(json_get "$state/ledger/state.json" consecutive_regressions)" = 0 ] ||
  { cat "$state/ledger/state.json"; fail "the regression counter moved"; }
expect_best 00
