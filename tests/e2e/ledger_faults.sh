# Finding 5 and 6 of issue 34: `kopt record` killed or failed at every write step it has, on a
# host ledger built from fixture measurements (no family is compiled). Each write step of the
# ledger (util/atomic_file's write, append and remove) is made, through KOPT_FAULT_INJECT, to fail
# with ENOSPC, to be cut half way by a kill (a temp file not renamed, half a line appended) or to
# be followed by a kill. Afterwards the next command (`kopt status`) completes or repairs the
# ledger and says so, no temp file is left, and once the record is run again the ledger is the
# one a record without faults writes: no attempt lost, none twice. Then a lost state.json beside
# its history is an error naming both files, and `kopt ledger rebuild` gives it back.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need python3

host_ledger_fixtures
ledger=$state/ledger

# Scenario `first`: record 01 on an empty ledger (the baseline 00 is recorded first: two
# commits). Scenario `next`: record 02 (a keep) on the ledger that holds 00 and 01.
prepare() { # scenario: the ledger before the record
  rm -rf "$ledger"
  if [ "$1" = next ]; then
    "$KOPT" record "${kopt_family[@]}" --candidate 01 >/dev/null 2>&1 || fail "recording 01"
  fi
}
candidate_of() { [ "$1" = first ] && echo 01 || echo 02; }

# The three files, as a record without faults leaves them.
for scenario in first next; do
  prepare $scenario
  "$KOPT" record "${kopt_family[@]}" --candidate "$(candidate_of $scenario)" >/dev/null 2>&1 ||
    fail "$scenario: the record without faults"
  mkdir -p "$WORK/expected/$scenario"
  cp "$ledger"/state.json "$ledger"/attempts.jsonl "$ledger"/performance.md "$WORK/expected/$scenario/"
done

# Checks that the ledger is whole: no journal, no temp file, and state.json, attempts.jsonl and
# performance.md are those of a record without faults (`expected`) or of none (`before`).
agree() { # scenario where
  local scenario=$1 where=$2 f
  [ ! -e "$ledger/ledger.journal" ] || fail "$where: ledger.journal is still there"
  if compgen -G "$ledger/*.tmp.*" >/dev/null; then fail "$where: temp files left: $(ls "$ledger")"; fi
  for f in state.json attempts.jsonl performance.md; do
    cmp -s "$ledger/$f" "$WORK/expected/$scenario/$f" || {
      diff "$WORK/expected/$scenario/$f" "$ledger/$f" | head -20
      fail "$where: $f is not what a record without faults writes"
    }
  done
}

points=0
for scenario in first next; do
  id=$(candidate_of $scenario)
  prepare $scenario
  KOPT_FAULT_INJECT=count "$KOPT" record "${kopt_family[@]}" --candidate "$id" >/dev/null \
    2>"$WORK/count.log" || { cat "$WORK/count.log"; fail "$scenario: the counting run"; }
  steps=$(grep -c '^kopt: write step ' "$WORK/count.log" || true)
  [ "$steps" -ge 5 ] || { cat "$WORK/count.log"; fail "$scenario: only $steps write steps counted"; }
  echo "$scenario: record $id has $steps write steps:"
  sed 's/^/  /' "$WORK/count.log"
  for ((step = 1; step <= steps; step++)); do
    for fault in fail torn kill; do
      prepare $scenario
      where="$scenario, step $step: $fault"
      rc=0
      KOPT_FAULT_INJECT=$step:$fault "$KOPT" record "${kopt_family[@]}" --candidate "$id" \
        >"$WORK/faulty.log" 2>&1 || rc=$?
      case $fault in
      fail) [ $rc -eq 2 ] || { cat "$WORK/faulty.log"; fail "$where: exit $rc, expected 2"; }
        grep -q "No space left on device" "$WORK/faulty.log" ||
          { cat "$WORK/faulty.log"; fail "$where: the error does not say why"; } ;;
      *) [ $rc -eq 137 ] || { cat "$WORK/faulty.log"; fail "$where: exit $rc, expected 137"; } ;;
      esac
      had_journal=0
      [ -e "$ledger/ledger.journal" ] && had_journal=1
      # The next command completes what the journal holds, removes temp files and says so.
      "$KOPT" status "${kopt_family[@]}" >"$WORK/status.log" 2>&1 ||
        [ "$scenario" = first ] || { cat "$WORK/status.log"; fail "$where: kopt status"; }
      if [ $had_journal = 1 ]; then
        grep -q "kopt: ledger: completed the interrupted record" "$WORK/status.log" ||
          { cat "$WORK/status.log"; fail "$where: status did not say it completed the record"; }
      fi
      if compgen -G "$ledger/*.tmp.*" >/dev/null || [ -e "$ledger/ledger.journal" ]; then
        fail "$where: after kopt status: $(ls "$ledger")"
      fi
      # Then the record again: whatever the fault left, the ledger ends as without faults.
      "$KOPT" record "${kopt_family[@]}" --candidate "$id" >"$WORK/again.log" 2>&1 ||
        { cat "$WORK/again.log"; fail "$where: the record after the fault"; }
      agree $scenario "$where"
      points=$((points + 1))
    done
  done
done
echo "ok: $points injection points tried (fail, torn, kill at each write step); the ledger agreed after each"

echo "--- a lost state.json beside its history: an error naming both, then kopt ledger rebuild"
prepare next
"$KOPT" record "${kopt_family[@]}" --candidate 02 >/dev/null 2>&1 || fail "recording 02"
for loss in missing dangling loop; do
  rm -f "$ledger/state.json"
  case $loss in
  dangling) ln -s "$WORK/nowhere.json" "$ledger/state.json" ;;
  loop) ln -s "$ledger/state.json" "$ledger/state.json" ;;
  esac
  for command in status record; do
    args=()
    [ $command = record ] && args=(--candidate 01)
    if "$KOPT" $command "${kopt_family[@]}" "${args[@]}" >"$WORK/lost.log" 2>&1; then
      cat "$WORK/lost.log"; fail "$loss state.json: kopt $command succeeded"
    fi
    grep -qF "$ledger/state.json" "$WORK/lost.log" && grep -qF "$ledger/attempts.jsonl holds 3 lines" \
      "$WORK/lost.log" && grep -qF "kopt ledger rebuild" "$WORK/lost.log" ||
      { cat "$WORK/lost.log"; fail "$loss state.json: kopt $command does not name both files and the ways out"; }
  done
  "$KOPT" ledger rebuild "${kopt_family[@]}" >"$WORK/rebuild.log" 2>&1 ||
    { cat "$WORK/rebuild.log"; fail "$loss state.json: kopt ledger rebuild"; }
  agree next "$loss state.json rebuilt"
  echo "ok: $loss state.json: $(head -1 "$WORK/lost.log" | cut -c1-160)..."
done
