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
# names), processes left running that a test started (kopt, harnesses, applications), and stray
# temporary files under the tests' folders. Writes a CSV line per run to stdout.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-test}
runs=${2:-1}
tests='^e2e\.(land_faults|ledger_faults|agent_land|agent_new|hostile_inputs|agent_round|interrupt|app|import_compdb|bad_state|bad_input)$'
leftovers() { # processes a test started: kopt itself, candidate harnesses and applications
  pgrep -f "$build/src/kopt |/kopt/[a-z_]+/bin/(candidate_|app/candidate_)" | grep -vx "$$" | wc -l
}
echo "run,date,tests,passed,failed,seconds,leftover_processes,stray_files"
for run in $(seq 1 "$runs"); do
  before=$(leftovers)
  start=$(date +%s)
  log=$(mktemp)
  ctest --test-dir "$build" -R "$tests" >"$log" 2>&1
  seconds=$(($(date +%s) - start))
  total=$(grep -cE "Test +#[0-9]+:" "$log")
  passed=$(grep -cE "Test +#[0-9]+: .* Passed" "$log")
  sleep 2 # a process killed by its test's end is gone by now
  left=$(($(leftovers) - before))
  stray=$(find /tmp -maxdepth 6 -path '/tmp/kopt-e2e-*' \( -name '*.tmp.*' -o -name '.new-*' -o -name 'land.journal*' \) 2>/dev/null | wc -l)
  echo "$run,$(date -u +%FT%TZ),$total,$passed,$((total - passed)),$seconds,$left,$stray"
  grep -E "\*\*\*Failed|Not Run" "$log" >&2
  rm -f "$log"
done
