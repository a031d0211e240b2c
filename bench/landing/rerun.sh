#!/usr/bin/env bash
# The landing and recording pass again, on this machine, from a built kopt tree: every kind of
# case the black-box pass tried, through the end-to-end tests that now hold them, then a count
# of what a run must never leave.
#   bash bench/landing/rerun.sh [BUILD_DIR] [RUNS]     (default build-test, 1 run)
# Kinds and where they live:
#   kill -9 and a full disk at every write step of land and record   e2e.land_faults, e2e.ledger_faults
#   land in a dirty tree, checkout into candidates/, stale binary     e2e.agent_land
#   new from patches, worktrees and folders (symlinks, FIFOs)        e2e.agent_new, e2e.hostile_inputs
#   parallel rounds and a land waiting for them                       e2e.agent_round, e2e.agent_land
#   signals to rounds, A/Bs and bench targets                         e2e.interrupt
#   hostile applications under kopt app                               e2e.app
#   malformed compile databases                                       e2e.import_compdb
#   odd ids, numbers, environments and paths                          e2e.bad_state, e2e.bad_input
# Counts per run: tests passed and failed (a failure is a loss or an inconsistency the test
# names), processes left running that a test started (kopt, harnesses, applications), and kopt's
# stray temporary files in what the tests left (the folders of failed tests, the spine's).
# Writes a CSV line per run to stdout.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-test}
runs=${2:-1}
tests='^e2e\.(land_faults|ledger_faults|agent_land|agent_new|hostile_inputs|agent_round|interrupt|app|import_compdb|bad_state|bad_input)$'
# Processes a test started and left: kopt itself, harnesses and applications whose command line
# names this build tree, or a test folder (/tmp/kopt-e2e-*) that is gone (its test ended). Other
# work on the machine (another tree's tests, with their folders in place) is not counted.
leftovers() {
  local pid cmd dir n=0
  for pid in $(pgrep -f "kopt|/bin/(candidate_|app/candidate_)|/rounds/[^/]+/candidate_"); do
    [ "$pid" = "$$" ] && continue
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    [[ "$cmd" == *"$0"* || "$cmd" == *pgrep* ]] && continue
    if [[ "$cmd" == *"$build/"* ]]; then
      n=$((n + 1))
    elif dir=$(grep -o '/tmp/kopt-e2e-[A-Za-z0-9]*' <<<"$cmd" | head -1) && [ -n "$dir" ] && [ ! -d "$dir" ]; then
      n=$((n + 1))
    fi
  done
  echo "$n"
}
echo "run,date,tests,passed,failed,seconds,leftover_processes,stray_files"
for run in $(seq 1 "$runs"); do
  before=$(leftovers)
  kept_before=$(ls -d /tmp/kopt-e2e-* 2>/dev/null | sort)
  start=$(date +%s)
  log=$(mktemp)
  ctest --test-dir "$build" -R "$tests" >"$log" 2>&1
  seconds=$(($(date +%s) - start))
  total=$(grep -cE "Test +#[0-9]+:" "$log")
  passed=$(grep -cE "Test +#[0-9]+: .* Passed" "$log")
  sleep 2 # a process killed by its test's end is gone by now
  left=$(($(leftovers) - before))
  # kopt's own temporary files in the folders this run's failed tests kept (ccache's excluded).
  stray=$(find $(comm -13 <(echo "$kept_before") <(ls -d /tmp/kopt-e2e-* 2>/dev/null | sort)) \
    "$build/tests/e2e" -not -path '*/ccache/*' \( -name '*.tmp.*' -o -name '.new-*' -o \
    -name '.old-*' -o -name 'land.journal*' \) 2>/dev/null | wc -l)
  echo "$run,$(date -u +%FT%TZ),$total,$passed,$((total - passed)),$seconds,$left,$stray"
  grep -E "\*\*\*Failed|Not Run" "$log" >&2
  rm -f "$log"
done
