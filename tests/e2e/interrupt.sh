# Ctrl-C (SIGINT) or SIGTERM to a kopt that runs a harness stops the harness too: within 2 s no
# process of it is left, kopt exits 130 (143), says the step was interrupted and writes no result
# for it. With the real kopt, cmake, ninja and host harness.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3
need pgrep

family_src=$WORK/src/host_gemm
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
b=$WORK/b
state=$b/kopt/host_gemm
fam=(--spec "$family_src/family.json" --state-dir "$state")
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
ninja -C "$b" candidate_00 candidate_01 >"$WORK/build.log" || { cat "$WORK/build.log"; fail "build"; }
"$KOPT" bench "${fam[@]}" --golden-only >/dev/null || fail "golden"
"$KOPT" bench "${fam[@]}" --candidate 01 --rounds 2 >/dev/null || fail "a first bench of 01"
[ -f "$state/results/01/measurement.json" ] || fail "no measurement of 01"
# From here runs are long (every config timed 400 times): a signal always finds a harness running.
sed -i 's/"bench": {"warmup": 1, "repeat": 7}/"bench": {"warmup": 1, "repeat": 400}/' "$family_src/family.json"
grep -q '"repeat": 400' "$family_src/family.json" || fail "family.json's bench section changed"
ninja -C "$b" candidate_00 candidate_01 >"$WORK/build2.log" || { cat "$WORK/build2.log"; fail "build"; }
# The golden again, now: with family.json changed, the next bench would make it first, and a
# signal meant for the bench of 01 could land in the golden's run instead (it did, on a loaded
# machine).
"$KOPT" bench "${fam[@]}" --golden-only >/dev/null || fail "golden after the change"

# A harness runs from the bin folder, or (a host benchmark run) as a copy in its round's folder.
harnesses() { pgrep -f "^$state/(bin|results/[0-9]+/rounds/[^/ ]+)/candidate_" || true; }

# interrupt <signal> <expected exit> <log> <kopt arguments...>: starts kopt, waits until its
# harness runs, sends the signal and checks that kopt and every harness are gone within 2 s.
interrupt() {
  local signal=$1 expected=$2 log=$3
  shift 3
  "$KOPT" "$@" >"$log" 2>&1 &
  local pid=$! waited=0
  until [ -n "$(harnesses)" ]; do
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 300 ] || { cat "$log"; fail "no harness started: kopt $*"; }
  done
  sleep 1
  kill -s "$signal" $pid
  local sent=$SECONDS rc=0
  wait $pid || rc=$?
  [ $rc -eq "$expected" ] || { cat "$log"; fail "kopt $1 exited $rc after SIG$signal, expected $expected"; }
  [ $((SECONDS - sent)) -le 3 ] || fail "kopt $1 took $((SECONDS - sent)) s to stop"
  sleep 2
  [ -z "$(harnesses)" ] || { ps -f -p "$(harnesses | tr '\n' ',' | sed 's/,$//')"; fail "a harness outlived kopt $1"; }
}

echo "--- SIGINT to kopt tune: the harness is stopped, the rows measured so far are whole"
interrupt INT 130 "$WORK/tune.log" tune "${fam[@]}" --kernels gemm_16x16x16,gemm_32x32x32 --chunk 2 \
  --repeat 400
grep -q "kopt: interrupted: tune of candidate 00: [0-9]* rows measured and kept in .*full.csv" \
  "$WORK/tune.log" || { cat "$WORK/tune.log"; fail "tune's message"; }
python3 - "$state/tune/00/full.csv" <<'EOF' || fail "full.csv after the interrupt"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert all(len(r) == len(rows[0]) for r in rows), rows
EOF
[ ! -f "$state/tune/00/tuned.csv" ] || fail "an interrupted tune wrote tuned.csv"

echo "--- SIGINT to kopt bench: no measurement is left to decide on"
interrupt INT 130 "$WORK/bench.log" bench "${fam[@]}" --candidate 01 --rounds 20
grep -q "kopt: interrupted: bench of candidate 01: no measurement written" "$WORK/bench.log" ||
  { cat "$WORK/bench.log"; fail "bench's message"; }
[ ! -f "$state/results/01/measurement.json" ] || fail "an interrupted bench left a measurement"
if "$KOPT" decide "${fam[@]}" --candidate 01 >"$WORK/decide.log"; then fail "decided on nothing"; fi
grep -q "verdict: failed" "$WORK/decide.log" || { cat "$WORK/decide.log"; fail "decide after the interrupt"; }

echo "--- SIGTERM to kopt bench --json: exit 143, the JSON says interrupted"
interrupt TERM 143 "$WORK/term.log" bench --json "${fam[@]}" --candidate 01 --rounds 20
grep -q '"status": "interrupted"' "$WORK/term.log" || { cat "$WORK/term.log"; fail "bench --json's answer"; }
echo "PASS"
