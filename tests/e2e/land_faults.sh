# `kopt land --commit` killed or failed at every write step it has, on a host family in a git
# repository whose ledger is built from fixture measurements (no family is compiled): BEST 02
# lands, 00 and 01 (settled) go, 03 (unrecorded) is rebased onto 02's files. Each write step
# (util/atomic_file's write, append and remove, counted with KOPT_FAULT_INJECT=count) is made to
# fail with ENOSPC, to be cut half way by a kill, or to be followed by a kill. Then the next kopt
# command on the family (status, log, land, record or report, in turn) completes the landing
# from its journal or rolls it back, and says so; after it the family's tree, its git HEAD and
# the ledger are either all as before the landing or all as a landing without faults leaves them
# (its land line and its commit), never a mix; no temp file, staging folder, journal or git lock
# is left, and none is committed. A landing rolled back lands and commits when run again. Then:
# a round completes a journal too; kopt killed while git commits the landing (from git's hook)
# is completed, commit included; a git index.lock a kill left is named, and once it is gone the
# landing completes.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need python3
need git
# A kill leaves kopt's temp folders (the removed candidates' diffs) behind: they go with $WORK.
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"

host_ledger_fixtures
ledger=$state/ledger
repo=$WORK/src
"$KOPT" record "${kopt_family[@]}" --candidate 01 >/dev/null 2>&1 || fail "recording 01"
"$KOPT" record "${kopt_family[@]}" --candidate 02 >/dev/null 2>&1 || fail "recording 02"
git -C "$repo" init -q
git -C "$repo" config user.name kopt
git -C "$repo" config user.email kopt@example.com
git -C "$repo" add -A
git -C "$repo" commit -qm "host family"
cp -a "$repo" "$WORK/pristine-src"
cp -a "$state" "$WORK/pristine-state"
restore() {
  rm -rf "$repo" "$state"
  cp -a "$WORK/pristine-src" "$repo"
  cp -a "$WORK/pristine-state" "$state"
}

# What the landing's outcome is made of: the family's tree, git's HEAD tree and status, and the
# ledger (its dates made one), as a JSON document.
cat >"$WORK/digest.py" <<'PY'
import hashlib, json, os, re, subprocess, sys
repo, ledger = sys.argv[1], sys.argv[2]
def git(*args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout
tree = {}
for root, dirs, files in os.walk(repo):
    dirs[:] = [d for d in dirs if d != ".git"]
    for f in files:
        p = os.path.join(root, f)
        tree[os.path.relpath(p, repo)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
def dated(path):
    text = open(path).read() if os.path.exists(path) else None
    return text and re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "DATE", text)
led = {f: dated(os.path.join(ledger, f)) for f in ("state.json", "attempts.jsonl", "performance.md")}
landed = os.path.join(ledger, "landed")
for f in sorted(os.listdir(landed)) if os.path.isdir(landed) else []:
    led["landed/" + f] = dated(os.path.join(landed, f))
json.dump({"tree": tree, "head": git("ls-tree", "-r", "HEAD"),
           "status": git("status", "--porcelain", "--untracked-files=all"), "ledger": led},
          sys.stdout, indent=1, sort_keys=True)
PY
digest() { python3 "$WORK/digest.py" "$repo" "$ledger" >"$1" || fail "digest"; }

# Which outcome the folders hold: "old", "landed", or a failure naming what is mixed.
outcome() { # where
  local where=$1
  digest "$WORK/now.json"
  if cmp -s "$WORK/now.json" "$WORK/old.json"; then echo old; return; fi
  if cmp -s "$WORK/now.json" "$WORK/landed.json"; then echo landed; return; fi
  echo "vs. before the landing:" >&2
  diff "$WORK/old.json" "$WORK/now.json" | head -20 >&2
  echo "vs. the landing:" >&2
  diff "$WORK/landed.json" "$WORK/now.json" | head -20 >&2
  fail "$where: neither the old tree and ledger nor the landed ones: a mix"
}

# Nothing a write or a git command leaves on its way: temp files, staging folders, journals,
# git's index lock; and nothing of them in HEAD.
no_strays() { # where
  local left
  left=$(find "$repo" "$state" \( -name '*.tmp.*' -o -name '.new-*' -o -name '.old-*' \
    -o -name 'land.journal*' -o -name 'ledger.journal*' -o -name 'index.lock' \) -print)
  [ -z "$left" ] || fail "$1: left behind: $left"
  ! git -C "$repo" ls-tree -r --name-only HEAD | grep -E '\.tmp\.|/\.new-|/\.old-|journal' ||
    fail "$1: a temp file or staging folder was committed"
}

digest "$WORK/old.json"
"$KOPT" land "${kopt_family[@]}" --commit --json >"$WORK/land.json" 2>"$WORK/land.err" ||
  { cat "$WORK/land.err"; fail "the land without faults"; }
python3 - "$WORK/land.json" <<'PY' || fail "the land without faults did not land what it should"
import json, sys
land = json.load(open(sys.argv[1]))
assert land["candidate"] == "02" and land["recorded"] and land["commit"], land
assert land["removed"] == ["00", "01"] and land["rebased"] == ["03"], land
PY
digest "$WORK/landed.json"
no_strays "the land without faults"
[ "$(git -C "$repo" log -1 --format=%s)" = "kopt: land candidate 02 of host_gemm" ] ||
  fail "the landing commit's subject"

restore
KOPT_FAULT_INJECT=count "$KOPT" land "${kopt_family[@]}" --commit >/dev/null 2>"$WORK/count.log" ||
  { cat "$WORK/count.log"; fail "the counting run"; }
steps=$(grep -c '^kopt: write step ' "$WORK/count.log" || true)
[ "$steps" -ge 10 ] || { cat "$WORK/count.log"; fail "only $steps write steps counted"; }
echo "land --commit has $steps write steps:"
sed 's/^/  /' "$WORK/count.log"

points=0 completed=0 rolled_back=0
commands=(status log land record report)
faults=(fail torn kill)
for ((step = 1; step <= steps; step++)); do
  for f in 0 1 2; do
    fault=${faults[f]}
    restore
    where="step $step: $fault"
    rc=0
    KOPT_FAULT_INJECT=$step:$fault "$KOPT" land "${kopt_family[@]}" --commit >"$WORK/faulty.log" \
      2>&1 || rc=$?
    case $fault in
    fail) [ $rc -eq 2 ] && grep -q "No space left on device" "$WORK/faulty.log" ||
      { cat "$WORK/faulty.log"; fail "$where: exit $rc without naming the full disk"; } ;;
    *) [ $rc -eq 137 ] || { cat "$WORK/faulty.log"; fail "$where: exit $rc, expected 137"; } ;;
    esac
    journal=none
    [ -e "$state/land.journal" ] && journal=whole
    [ $journal = none ] && compgen -G "$state/land.journal.tmp.*" >/dev/null && journal=temp
    if [ $fault = fail ] && [ $journal = whole ]; then
      grep -qF "the land of candidate 02 is kept in $state/land.journal" "$WORK/faulty.log" ||
        { cat "$WORK/faulty.log"; fail "$where: the error does not say the journal keeps it"; }
    fi
    # The next command on the family, whichever it is, completes or rolls back first.
    command=${commands[(step + f) % 5]}
    args=()
    [ "$command" = land ] && args=(--commit)
    # 01's decision is against 00, no longer BEST: refused, after the repair.
    [ "$command" = record ] && args=(--candidate 01)
    rc=0
    "$KOPT" "$command" "${kopt_family[@]}" "${args[@]}" >"$WORK/next.log" 2>&1 || rc=$?
    case $journal in
    whole) grep -q "^kopt: completed the interrupted land of candidate 02 from $state/land.journal" \
      "$WORK/next.log" ||
      { cat "$WORK/next.log"; fail "$where: $command did not say it completed the land"; }
      completed=$((completed + 1)) ;;
    temp) grep -q "^kopt: rolled back an interrupted land" "$WORK/next.log" ||
      { cat "$WORK/next.log"; fail "$where: $command did not say it rolled the land back"; }
      rolled_back=$((rolled_back + 1)) ;;
    esac
    [ $rc -eq 0 ] || [ "$command" = record ] ||
      { [ "$command" = land ] && grep -q "nothing to land" "$WORK/next.log"; } ||
      { cat "$WORK/next.log"; fail "$where: kopt $command after the fault exited $rc"; }
    no_strays "$where, after kopt $command"
    got=$(outcome "$where, after kopt $command")
    if [ $journal = whole ] && [ "$got" != landed ]; then
      fail "$where: the journal was in place, yet kopt $command did not complete the landing"
    fi
    if [ "$got" = old ]; then
      "$KOPT" land "${kopt_family[@]}" --commit >"$WORK/again.log" 2>&1 ||
        { cat "$WORK/again.log"; fail "$where: the land run again"; }
      [ "$(outcome "$where, the land run again")" = landed ] || fail "$where: the land run again"
    fi
    echo "$where: journal $journal; kopt $command: $got"
    points=$((points + 1))
  done
done
[ $completed -gt 0 ] && [ $rolled_back -gt 0 ] || fail "no landing was completed or none rolled back"
echo "ok: $points injection points; $completed landings completed and $rolled_back rolled back" \
  "by the next command; never a mix"

echo "--- kopt round completes an interrupted land before it reads the family"
restore
rc=0
KOPT_FAULT_INJECT=$((steps / 2)):kill "$KOPT" land "${kopt_family[@]}" --commit >/dev/null 2>&1 || rc=$?
[ $rc -eq 137 ] && [ -e "$state/land.journal" ] || fail "the kill half way through the landing"
rc=0
"$KOPT" round "${kopt_family[@]}" --id 03 --build-dir "$WORK/no-build" >"$WORK/round.log" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "^kopt: completed the interrupted land of candidate 02" "$WORK/round.log" ||
  { cat "$WORK/round.log"; fail "round after the kill exited $rc without completing the land"; }
no_strays "after kopt round"
[ "$(outcome "after kopt round")" = landed ] || fail "after kopt round: not landed"

echo "--- kill -9 of kopt land while git commits the landing (from git's pre-commit hook)"
restore
cat >"$repo/.git/hooks/pre-commit" <<HOOK
#!/bin/sh
[ -e "$WORK/killed-once" ] && exit 0
touch "$WORK/killed-once"
kill -9 \$(ps -o ppid= -p \$PPID)
exit 1
HOOK
chmod +x "$repo/.git/hooks/pre-commit"
rc=0
"$KOPT" land "${kopt_family[@]}" --commit >"$WORK/hook.log" 2>&1 || rc=$?
[ $rc -eq 137 ] && [ -e "$state/land.journal" ] ||
  { cat "$WORK/hook.log"; fail "the kill in git's hook: exit $rc"; }
[ "$(git -C "$repo" log -1 --format=%s)" = "host family" ] || fail "the killed landing committed"
"$KOPT" log "${kopt_family[@]}" >"$WORK/hook-next.log" 2>&1 || { cat "$WORK/hook-next.log"; fail "log"; }
grep -q "^kopt: completed the interrupted land of candidate 02 .* (committed [0-9a-f]*)$" "$WORK/hook-next.log" ||
  { cat "$WORK/hook-next.log"; fail "log did not say it completed and committed the land"; }
rm "$repo/.git/hooks/pre-commit"
no_strays "after the kill in git's hook"
[ "$(outcome "after the kill in git's hook")" = landed ] || fail "after the kill in git's hook: not landed"

echo "--- a git lock a kill left: the completion stops naming it and the journal, then completes"
restore
rc=0
KOPT_FAULT_INJECT=$steps:torn "$KOPT" land "${kopt_family[@]}" --commit >/dev/null 2>&1 || rc=$?
[ $rc -eq 137 ] && [ -e "$state/land.journal" ] || fail "the kill before the journal's removal"
touch "$repo/.git/index.lock"
rc=0
"$KOPT" status "${kopt_family[@]}" >"$WORK/locked.log" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -qF "$repo/.git/index.lock" "$WORK/locked.log" &&
  grep -qF "the landing is written and recorded, only its commit is left" "$WORK/locked.log" &&
  grep -qF "while completing the land of candidate 02 kept in $state/land.journal" "$WORK/locked.log" ||
  { cat "$WORK/locked.log"; fail "status with git's index locked exited $rc"; }
rm "$repo/.git/index.lock"
"$KOPT" status "${kopt_family[@]}" >"$WORK/unlocked.log" 2>&1 || { cat "$WORK/unlocked.log"; fail "status"; }
grep -q "^kopt: completed the interrupted land of candidate 02" "$WORK/unlocked.log" ||
  { cat "$WORK/unlocked.log"; fail "status did not complete the land once git's lock was gone"; }
no_strays "after git's lock"
[ "$(outcome "after git's lock")" = landed ] || fail "after git's lock: not landed"
echo "ok: $(grep -o "Unable to create[^:]*" "$WORK/locked.log" | head -1), then completed"
