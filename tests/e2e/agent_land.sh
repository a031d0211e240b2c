# The loop from BEST to the tree, as an agent runs it, with the real kopt, git, cmake, ninja and
# harness on the host family. Three rounds each start from the BEST of their time: `kopt
# checkout --worktree` (BEST's files committed in a new git worktree), an edit there, `kopt new
# --from-worktree` without --base (the worktree names its candidate), `kopt round`. `kopt diff`
# of two candidates, given to `kopt new --from-patch`, makes the second one's content again.
# Then `kopt land --commit`: the family's files are BEST's, the tree holds no folder of a
# settled candidate (they are committed first, so the landing commit's parent has them, and each
# one's patch is in the ledger), and the ledger goes on: a fourth round from BEST decides against
# the landed BEST; a round whose BEST harness is older than the landed files, or whose build
# folder is broken for BEST's target too, names the land as the cause and records nothing.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need git
need python3
export KOPT_DEVICE_LOCK_DIR=$WORK/device-locks

copy_host_family
small_host_family
repo=$WORK/src
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=kopt -c user.email=kopt@example.com commit -qm "host family"
host_family_with_baseline candidate_00
examples=$KOPT_SOURCE_DIR/examples/host_gemm/candidates

best() { "$KOPT" status "${kopt_family[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["best"])'; }

# One round as an agent runs it: check out BEST, apply the edit (a command run in the family's
# folder of the worktree), make the candidate, run the round. Leaves round-<id>.json.
agent_round() { # id edit hypothesis
  local id=$1 edit=$2 hypothesis=$3 wt=$WORK/wt$1 from
  from=$(best)
  "$KOPT" checkout "${kopt_family[@]}" --worktree "$wt" >"$WORK/checkout$id.log" 2>&1 ||
    { cat "$WORK/checkout$id.log"; fail "checkout for $id"; }
  (cd "$wt/host_gemm" && eval "$edit") || fail "the edit of $id"
  "$KOPT" new "${kopt_family[@]}" --id "$id" --from-worktree "$wt" --hypothesis "$hypothesis" --json \
    >"$WORK/new$id.json" 2>"$WORK/new$id.err" || { cat "$WORK/new$id.err"; fail "new $id"; }
  [ "$(json_get "$WORK/new$id.json" base)" = "$from" ] || fail "$id's base is not BEST $from"
  local rc=0
  "$KOPT" round --json "${kopt_family[@]}" --id "$id" --build-dir "$b" \
    >"$WORK/round-$id.json" 2>"$WORK/round-$id.log" || rc=$?
  [ "$(json_get "$WORK/round-$id.json" best_before)" = "$from" ] ||
    { cat "$WORK/round-$id.log"; fail "round $id was not decided against BEST $from"; }
  echo "$id from BEST $from: $(json_get "$WORK/round-$id.json" verdict) (exit $rc)"
}

echo "--- three rounds, each from the BEST of its time"
agent_round 11 "cp '$examples/01/gemm_kernel.hpp' gemm_kernel.hpp" "4x8 register tiles"
[ "$(json_get "$WORK/round-11.json" verdict)" = keep ] || fail "11 was not kept"
agent_round 12 "echo '// a comment' >>gemm_kernel.hpp" "a comment only"
[ "$(json_get "$WORK/round-12.json" verdict)" != incorrect ] || fail "12 (a comment) incorrect"
agent_round 13 "cp '$examples/03/gemm_kernel.hpp' gemm_kernel.hpp" "Kahan sums (slower)"
[ "$(json_get "$WORK/round-13.json" verdict)" = regression ] || fail "13 did not regress"
landed=$(best)

echo "--- kopt diff 11 13 is the change kopt new makes 13 from again"
"$KOPT" diff "${kopt_family[@]}" 11 13 >"$WORK/11-13.patch" || fail "diff 11 13"
grep -q "^+++ b/gemm_kernel.hpp" "$WORK/11-13.patch" || { cat "$WORK/11-13.patch"; fail "the diff's paths"; }
if "$KOPT" new "${kopt_family[@]}" --id 19 --base 11 --from-patch "$WORK/11-13.patch" 2>"$WORK/new19.err"; then
  fail "the diff made a new content"
fi
grep -q "equals candidate 13's content" "$WORK/new19.err" || { cat "$WORK/new19.err"; fail "new 19's message"; }

echo "--- kopt land --commit: BEST $landed becomes the family's own files"
"$KOPT" checkout "${kopt_family[@]}" --dir "$WORK/best-files" >/dev/null || fail "checkout --dir"
echo "--- messages: land --id '' is refused, a TMPDIR that is no folder is named"
rc=0
"$KOPT" land "${kopt_family[@]}" --id '' >/dev/null 2>"$WORK/land-empty-id.err" || rc=$?
[ $rc -eq 2 ] && grep -qF "unknown candidate ''" "$WORK/land-empty-id.err" ||
  { cat "$WORK/land-empty-id.err"; fail "land --id '' exited $rc"; }
rc=0
TMPDIR=$WORK/no-such-tmp "$KOPT" diff "${kopt_family[@]}" 11 13 >/dev/null 2>"$WORK/tmpdir.err" || rc=$?
[ $rc -eq 2 ] && grep -qF "TMPDIR=$WORK/no-such-tmp: not a folder kopt can make temporary files in" "$WORK/tmpdir.err" ||
  { cat "$WORK/tmpdir.err"; fail "a missing TMPDIR: exit $rc"; }

echo "--- a dirty tree: land keeps the user's edit unless --overwrite, and commits nothing staged"
echo "// my own edit" >>"$family_src/gemm_kernel.hpp"
echo "my notes" >"$family_src/NOTES.txt"
git -C "$repo" add host_gemm/NOTES.txt
echo "// my harness change" >>"$family_src/harness.cpp"
head_before=$(git -C "$repo" rev-parse HEAD)
lines_before=$(wc -l <"$state/ledger/attempts.jsonl")
rc=0
"$KOPT" land "${kopt_family[@]}" --commit >/dev/null 2>"$WORK/land-dirty.err" || rc=$?
[ $rc -eq 2 ] || { cat "$WORK/land-dirty.err"; fail "land in a dirty tree exited $rc, not 2"; }
grep -qF "land: the family's files that landing writes hold uncommitted changes: gemm_kernel.hpp (modified): commit or stash them, or give --overwrite to replace them with candidate $landed's; nothing written" \
  "$WORK/land-dirty.err" || { cat "$WORK/land-dirty.err"; fail "the dirty tree's message"; }
[ "$(tail -1 "$family_src/gemm_kernel.hpp")" = "// my own edit" ] || fail "the user's edit is gone"
[ "$(git -C "$repo" rev-parse HEAD)" = "$head_before" ] || fail "a refused land committed"
[ "$(wc -l <"$state/ledger/attempts.jsonl")" = "$lines_before" ] || fail "a refused land was recorded"
"$KOPT" land "${kopt_family[@]}" --commit --overwrite --json >"$WORK/land.json" 2>"$WORK/land.err" ||
  { cat "$WORK/land.err"; fail "land"; }
for commit in HEAD HEAD^; do
  ! git -C "$repo" show --name-only --format= "$commit" | grep -E "NOTES.txt|harness.cpp" ||
    fail "$commit holds the user's NOTES.txt or harness.cpp"
done
[ "$(git -C "$repo" status --porcelain -- host_gemm)" = "$(printf 'A  host_gemm/NOTES.txt\n M host_gemm/harness.cpp')" ] ||
  { git -C "$repo" status --porcelain; fail "the user's staged NOTES.txt and harness.cpp change"; }
git -C "$repo" rm -q --cached host_gemm/NOTES.txt
rm "$family_src/NOTES.txt"
git -C "$repo" checkout -q -- host_gemm/harness.cpp
for f in gemm_kernel.hpp instance.cpp.in; do
  cmp -s "$WORK/best-files/$f" "$family_src/$f" || fail "the family's $f is not BEST $landed's"
done
[ "$(cd "$family_src/candidates" && ls)" = "$landed" ] ||
  { ls -R "$family_src/candidates"; fail "candidate folders other than BEST's stayed"; }
# Land configured the family's build folder again: the next ctest knows no removed candidate.
grep -q "^configured $b again: its tests of .* are gone" "$WORK/land.err" ||
  { cat "$WORK/land.err"; fail "land did not configure the build folder again"; }
ctest --test-dir "$b" -N | grep -Ev "candidate_$landed\.|Test project|Total Tests|^$" | grep "candidate_" &&
  fail "ctest still lists removed candidates' tests"
ctest --test-dir "$b" -L correctness >"$WORK/after-land.log" 2>&1 ||
  { cat "$WORK/after-land.log"; fail "the first ctest after the land failed"; }
[ "$(cd "$family_src/candidates/$landed" && ls)" = candidate.json ] || fail "BEST's folder holds copies"
[ -z "$(git -C "$repo" status --porcelain -- host_gemm)" ] || { git -C "$repo" status; fail "land left changes"; }
git -C "$repo" log -1 --format=%s | grep -q "^kopt: land candidate $landed of host_gemm" ||
  fail "the landing commit's subject"
git -C "$repo" show "HEAD^:host_gemm/candidates/13/gemm_kernel.hpp" >/dev/null 2>&1 ||
  fail "13's file is not in the landing commit's parent"
python3 - "$state/ledger" "$WORK/land.json" "$landed" <<'PY' || fail "the ledger after landing"
import json, sys
ledger, land, landed = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
lines = [json.loads(l) for l in open(f"{ledger}/attempts.jsonl")]
last = lines[-1]
assert last["kind"] == "land" and last["candidate"] == landed, last
assert sorted(last["removed"]) == sorted({"00", "11", "12", "13"} - {landed}), last
assert land["recorded"] and land["commit"], land
state = json.load(open(f"{ledger}/state.json"))
assert state["best"] == landed and state["best_hash"] == land["hash"], state
assert "landed: the family's files are" in open(f"{ledger}/performance.md").read()
# Each removed candidate's change against its base stays in the ledger, git or not.
patch = open(f"{ledger}/landed/13.patch").read()
assert "+++ b/gemm_kernel.hpp" in patch and "Kahan" in patch, patch[:500]
assert land["patches"] and all(p.endswith(".patch") for p in land["patches"]), land
PY
git -C "$repo" log -2 --format=%s | sed -n 2p | grep -q "^kopt: the candidates of host_gemm before landing $landed" ||
  { git -C "$repo" log -3 --format=%s; fail "the candidates were not committed before the landing"; }

echo "--- BEST's folder deleted by hand: kopt status says so and exits 1"
mv "$family_src/candidates/$landed" "$WORK/best-folder"
rc=0
"$KOPT" status "${kopt_family[@]}" >"$WORK/status-gone.txt" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -qF "error: BEST $landed's folder $family_src/candidates/$landed is gone" "$WORK/status-gone.txt" ||
  { cat "$WORK/status-gone.txt"; fail "status without BEST's folder exited $rc"; }
rc=0
"$KOPT" status "${kopt_family[@]}" --json >"$WORK/status-gone.json" 2>&1 || rc=$?
[ $rc -eq 1 ] && json_get "$WORK/status-gone.json" error | grep -qF "is gone" || fail "status --json without BEST's folder"
mv "$WORK/best-folder" "$family_src/candidates/$landed"

echo "--- the ledger goes on: a fourth round from BEST, decided against the landed BEST, in a"
echo "    build folder whose configure was interrupted; a land meanwhile waits for it, saying why"
rm "$b/build.ninja"
agent_round 14 "echo '// after landing' >>gemm_kernel.hpp" "a comment after landing" >"$WORK/agent14.log" &
round_pid=$!
for _ in $(seq 300); do
  grep -qs "kopt round of candidate 14" "$state/locks/family.lock" && break
  sleep 0.2
done
grep -qs "kopt round of candidate 14" "$state/locks/family.lock" || { wait $round_pid; fail "round 14 never took the family's lock"; }
rc=0
"$KOPT" land "${kopt_family[@]}" --json >"$WORK/land2.json" 2>"$WORK/land2.err" || rc=$?
wait $round_pid || fail "round 14"
cat "$WORK/agent14.log"
grep -q "kopt: waiting for $state/locks/family.lock (held by pid [0-9]*: kopt round of candidate 14)" "$WORK/land2.err" ||
  { cat "$WORK/land2.err"; fail "the land did not say it waits for round 14"; }
[ $rc -eq 0 ] || { cat "$WORK/land2.err"; fail "the land after round 14 exited $rc"; }
grep -q "has no build.ninja (an interrupted configure?): configuring it again" "$WORK/round-14.log" ||
  { cat "$WORK/round-14.log"; fail "round 14 did not configure the broken build folder again"; }
python3 - "$WORK/round-14.json" "$state/ledger" <<'PY' || { cat "$WORK/round-14.log"; fail "round 14"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] in ("keep", "tie", "regression", "split"), r
assert r["record"]["outcome"] == "recorded", r
lines = [json.loads(l) for l in open(f"{sys.argv[2]}/attempts.jsonl")]
# The land ran after the round's record, not beside it.
assert lines[-1]["kind"] == "land" and lines[-2].get("candidate") == "14", lines[-2:]
PY

echo "--- a binary older than the landed files (BEST's harness another candidate's, newer than its"
echo "    sources, so no build replaces it): the round exits 2 naming the land, and records nothing"
landed2=$(json_get "$WORK/land2.json" candidate)
best_now=$(best)
other=$(cd "$state/bin" && ls candidate_* | grep -vx "candidate_$best_now" | head -1)
[ -n "$other" ] || fail "no other candidate's harness in $state/bin"
cp "$state/bin/$other" "$state/bin/candidate_$best_now"
lines_before=$(wc -l <"$state/ledger/attempts.jsonl")
"$KOPT" checkout "${kopt_family[@]}" --worktree "$WORK/wt15" >/dev/null 2>&1 || fail "checkout for 15"
echo "// 15" >>"$WORK/wt15/host_gemm/gemm_kernel.hpp"
"$KOPT" new "${kopt_family[@]}" --id 15 --from-worktree "$WORK/wt15" --hypothesis "a comment" \
  >/dev/null 2>"$WORK/new15.err" || { cat "$WORK/new15.err"; fail "new 15"; }
rc=0
"$KOPT" round --json "${kopt_family[@]}" --id 15 --build-dir "$b" >"$WORK/round-15.json" \
  2>"$WORK/round-15.log" || rc=$?
[ $rc -eq 2 ] || { cat "$WORK/round-15.log"; fail "the round with a stale binary exited $rc, not 2"; }
grep -qF "the family's files changed in the land of candidate $landed2 (" "$WORK/round-15.log" &&
  grep -qF "may predate it: build it again (cmake --build $b)" "$WORK/round-15.log" &&
  grep -qF "nothing recorded" "$WORK/round-15.log" ||
  { cat "$WORK/round-15.log"; fail "the stale binary's error does not name the land"; }
[ "$(wc -l <"$state/ledger/attempts.jsonl")" = "$lines_before" ] ||
  { tail -1 "$state/ledger/attempts.jsonl"; fail "the round with a stale binary recorded a line"; }
[ ! -e "$state/results/15/decision.json" ] || [ "$(json_get "$state/results/15/decision.json" verdict)" != failed ] ||
  fail "candidate 15 was decided as failed for a stale binary"
echo "ok: $(grep -o "the family's files changed in the land[^,]*" "$WORK/round-15.log" | head -1)"

echo "--- a build folder broken after the land (build.ninja unreadable to ninja): BEST's own target"
echo "    fails too, so the round exits 2 naming the land, and 15 is not failed"
cp "$b/build.ninja" "$WORK/build.ninja"
echo "this is not ninja" >>"$b/build.ninja"
rc=0
"$KOPT" round --json "${kopt_family[@]}" --id 15 --build-dir "$b" >"$WORK/round-15b.json" \
  2>"$WORK/round-15b.log" || rc=$?
cp "$WORK/build.ninja" "$b/build.ninja"
[ $rc -eq 2 ] || { cat "$WORK/round-15b.log"; fail "the round in a broken build folder exited $rc, not 2"; }
grep -qF "BEST $best_now's own target candidate_$best_now fails to build too: the build folder is broken, not candidate 15's code" \
  "$WORK/round-15b.log" && grep -qF "the land of candidate $landed2 (" "$WORK/round-15b.log" ||
  { cat "$WORK/round-15b.log"; fail "the broken build folder's error does not name it and the land"; }
[ "$(wc -l <"$state/ledger/attempts.jsonl")" = "$lines_before" ] ||
  { tail -1 "$state/ledger/attempts.jsonl"; fail "the round in a broken build folder recorded a line"; }
[ ! -e "$state/results/15/decision.json" ] || [ "$(json_get "$state/results/15/decision.json" verdict)" != failed ] ||
  fail "candidate 15 was decided as failed for a broken build folder"
echo "PASS"
