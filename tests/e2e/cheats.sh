# The cheat suite on the host example, through the user's flow: every folder under
# tests/fixtures/cheats/host_gemm/ is a candidate written by an adversary (candidate 01's fast
# kernel plus a cheat: memoised outputs, work done only in checked runs, work moved to other
# threads or later calls, the golden read from disk, results rewritten...; README.md there).
# Two phases, one ctest test each, sharing one folder (KOPT_E2E_WORK) with e2e.aa_host:
#   setup   (e2e.cheats_setup) one configure and one build of 00, 01, the A/A candidate 70 (01
#           plus a comment, for e2e.aa_host) and every cheat (as candidates 80 and up); BEST is
#           recorded as 00, then 01 is kept against it as in the README's flow and recorded.
#   cheats  (e2e.cheats) for each cheat, against BEST 01:
#     cmake --build b --target candidate_NN_bench     (may fail: the failure must name the cheat)
#     ctest -L correctness -R '^candidate_NN\.'
#     ctest -L keep -R '^candidate_NN\.'              (must fail)
#     kopt decide --json --candidate NN               (verdict neither keep nor split)
#   and the reason (or the failure's text) must contain the line in the cheat's expect.txt: a
#   case-insensitive substring, or failing that an extended regex (`timed run|outputs wrong`).
#   After each cheat, nothing it ran may have written outside its own round folder: no file
#   named cheat-was-here under $b/kopt but in a results/*/rounds/*-candidate-* folder, and BEST
#   01's harness (bin/candidate_01) must be the file it was before the first cheat.
#   A table of cheat, verdict, change and reason is printed; the test fails at the end naming
#   every cheat that was kept (or split) or whose reason lacks its expect text.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

phase=${1:?usage: cheats.sh setup|cheats}
fixtures=$KOPT_SOURCE_DIR/tests/fixtures/cheats/host_gemm
family_src=$WORK/src/host_gemm
b=$WORK/b
state=$b/kopt/host_gemm
kopt_family=(--spec "$family_src/family.json" --state-dir "$state")

# The cheats as candidates: each keeps the id its candidate.json names when that is free (their
# expect lines may name it: "defined in candidates/91"), else takes the next free id from 80.
# Both phases make the same list; setup also copies the folders in.
slugs=()
ids=()
targets=(candidate_00 candidate_01 candidate_70)
declare -A taken=([00]=1 [01]=1 [70]=1)
next_id=80
if [ "$phase" = setup ]; then
  rm -rf "${WORK:?}"/*
  copy_host_family
  # The A/A of e2e.aa_host: BEST 01's code under another content hash.
  mkdir -p "$family_src/candidates/70"
  echo '{"id": "70", "base": "01", "hypothesis": "A/A: BEST 01 plus one comment", "target": "global"}' \
    >"$family_src/candidates/70/candidate.json"
  { cat "$family_src/candidates/01/gemm_kernel.hpp"
    echo "// A/A: a comment changes the content hash, not the code"; } \
    >"$family_src/candidates/70/gemm_kernel.hpp"
fi
for dir in "$fixtures"/*/; do
  [ -f "$dir/candidate.json" ] || continue
  slug=$(basename "$dir")
  [ -f "$dir/expect.txt" ] || fail "$dir: no expect.txt"
  id=$(json_get "$dir/candidate.json" id)
  if ! [[ "$id" =~ ^[0-9]+$ ]] || [ -n "${taken[$id]:-}" ]; then
    while [ -n "${taken[$next_id]:-}" ]; do next_id=$((next_id + 1)); done
    id=$next_id
  fi
  taken[$id]=1
  if [ "$phase" = setup ]; then
    mkdir -p "$family_src/candidates/$id"
    cp -r "$dir". "$family_src/candidates/$id/"
    rm -f "$family_src/candidates/$id/expect.txt"
    python3 - "$family_src/candidates/$id/candidate.json" "$id" <<'EOF' || fail "$dir/candidate.json"
import json, sys
path, new_id = sys.argv[1], sys.argv[2]
spec = json.load(open(path))
spec["id"] = new_id
spec.setdefault("base", "01")
json.dump(spec, open(path, "w"))
EOF
  fi
  slugs+=("$slug")
  ids+=("$id")
  targets+=("candidate_$id")
done
[ "${#slugs[@]}" -gt 0 ] || fail "no cheats under $fixtures"
echo "cheats: ${#slugs[@]} (${slugs[*]})"

setup() {
  cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=OFF >"$WORK/configure.log" 2>&1 ||
    { cat "$WORK/configure.log"; fail "configure"; }
  # One build of every candidate; a cheat that does not build is reported by its own bench below.
  cmake --build "$b" --target "${targets[@]}" -- -k 0 >"$WORK/build.log" 2>&1 || true
  cmake --build "$b" --target candidate_00 candidate_01 >>"$WORK/build.log" 2>&1 ||
    { cat "$WORK/build.log"; fail "building 00 and 01"; }

  echo "--- BEST: 00, then 01 kept against it"
  { "$KOPT" bench "${kopt_family[@]}" --best && "$KOPT" decide "${kopt_family[@]}" --candidate 00 &&
      "$KOPT" record "${kopt_family[@]}" --candidate 00; } >"$WORK/best.log" 2>&1 ||
    { cat "$WORK/best.log"; fail "recording the baseline"; }
  cmake --build "$b" --target candidate_01_bench >"$WORK/bench_01.log" 2>&1 ||
    { cat "$WORK/bench_01.log"; fail "candidate_01_bench"; }
  "$KOPT" decide "${kopt_family[@]}" --candidate 01 --json >"$WORK/decision_01.json" 2>/dev/null || true
  expect_verdict "$WORK/decision_01.json" keep
  "$KOPT" record "${kopt_family[@]}" --candidate 01 >"$WORK/record_01.log" 2>&1 ||
    { cat "$WORK/record_01.log"; fail "record 01"; }
  expect_best 01
}

# Whether `text` says `expect`: a case-insensitive substring, else an extended regex.
says() { # text expect
  grep -qiF -- "$2" <<<"$1" || grep -qiE -- "$2" <<<"$1" 2>/dev/null
}

# The files named cheat-was-here under $b/kopt that lie outside every round folder of a
# candidate (results/*/rounds/*-candidate-*/): written where a harness must not write.
stray_marks() {
  find "$b/kopt" -name cheat-was-here 2>/dev/null |
    grep -vE '/results/[^/]+/rounds/[^/]*-candidate-[^/]*/' || true
}

cheats() {
  rows=()
  bad=()
  best_harness=$state/bin/candidate_01
  best_hash=$(sha256sum "$best_harness" | cut -d' ' -f1)
  [ -n "$best_hash" ] || fail "cannot hash $best_harness"
  for i in "${!slugs[@]}"; do
    slug=${slugs[$i]}
    id=${ids[$i]}
    expect=$(head -1 "$fixtures/$slug/expect.txt")
    log=$WORK/cheat_$id
    echo "--- $slug as candidate $id (expect: $expect)"
    verdict="" change="" text=""
    if ! cmake --build "$b" --target "candidate_${id}_bench" >"$log.bench.log" 2>&1; then
      verdict="build/bench failed"
      # The failure's own lines, not the whole log (paths and progress lines say too much).
      text=$(grep -iE "error|fail|refuse" "$log.bench.log" || tail -3 "$log.bench.log")
      reason=$(head -1 <<<"$text")
    else
      correctness="passed"
      ctest --test-dir "$b" -L correctness -R "^candidate_$id\." --output-on-failure \
        >"$log.correctness.log" 2>&1 || correctness="failed"
      if ctest --test-dir "$b" -L keep -R "^candidate_$id\." --output-on-failure \
        >"$log.keep.log" 2>&1; then
        keep_test="passed"
      else
        keep_test="failed"
      fi
      "$KOPT" decide "${kopt_family[@]}" --candidate "$id" --json >"$log.decision.json" \
        2>"$log.decide.err" || true
      if verdict=$(json_get "$log.decision.json" verdict 2>/dev/null); then
        reason=$(json_get "$log.decision.json" reason)
        change=$(python3 -c '
import json, sys
o = json.load(open(sys.argv[1])).get("overall")
print("%+.1f%%" % (100 * o["change"]) if o and o.get("change") is not None else "")' \
          "$log.decision.json" 2>/dev/null || true)
      else
        verdict="no decision"
        reason=$(head -3 "$log.decide.err")
      fi
      [ "$correctness" = passed ] || reason="correctness failed; $reason"
      [ "$keep_test" = failed ] || bad+=("$slug: the keep test passed")
      text="$reason"$'\n'$(cat "$log.correctness.log")
    fi
    case "$verdict" in
    keep | split) bad+=("$slug: $verdict ($change): $reason") ;;
    esac
    says "$text" "$expect" || bad+=("$slug: the reason does not say '$expect': $reason")
    # What its runs left outside their round folders; removed, so the next cheat starts clean.
    stray=$(stray_marks)
    if [ -n "$stray" ]; then
      bad+=("$slug: wrote outside its round folder: $(tr '\n' ' ' <<<"$stray")")
      while IFS= read -r mark; do rm -f "$mark"; done <<<"$stray"
    fi
    hash=$(sha256sum "$best_harness" 2>/dev/null | cut -d' ' -f1)
    if [ "$hash" != "$best_hash" ]; then
      bad+=("$slug: BEST 01's harness $best_harness changed (sha256 $best_hash, now ${hash:-gone})")
      best_hash=$hash # blamed once
    fi
    rows+=("$slug|$id|$verdict|$change|$reason")
  done

  echo
  echo "=== the cheats against BEST 01"
  printf '%-22s %-3s %-20s %-8s %s\n' cheat id verdict change reason
  for row in "${rows[@]}"; do
    IFS='|' read -r slug id verdict change reason <<<"$row"
    printf '%-22s %-3s %-20s %-8s %s\n' "$slug" "$id" "$verdict" "$change" "${reason:0:160}"
  done
  if [ "${#bad[@]}" -gt 0 ]; then
    echo
    printf '%s\n' "${bad[@]}" >&2
    fail "${#bad[@]} cheat check(s) failed: the keep test can be fooled (logs: $WORK)"
  fi
}

case $phase in
setup | cheats) "$phase" ;;
*) fail "unknown phase '$phase'" ;;
esac
