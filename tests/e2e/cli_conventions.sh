# The CLI's conventions with the real kopt and no build: a usage error exits 2 and names the
# option at fault (a numeric one names its range), --json is taken after a nested subcommand and prints JSON, status without a
# ledger is a JSON object with an error, a missing state folder is an error, heuristic eval has
# one --ties, ls / log answer in JSON, and bench's identity refusal is a dated failed measurement.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need python3

copy_host_family
spec=$family_src/family.json
state=$WORK/state
mkdir -p "$state"
fam=(--spec "$spec" --state-dir "$state")
run() { # run <expected exit> <command...>: stdout in $WORK/out, stderr in $WORK/err
  local want=$1 rc=0; shift
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$WORK/out" "$WORK/err"; fail "exit $rc, expected $want: $*"; }
}
json() { python3 -c "import json,sys; d=json.load(open('$WORK/out')); $1" || { cat "$WORK/out"; fail "$2"; }; }

echo "--- an unknown option: exit 2, named (not hidden behind a missing required one)"
run 2 "$KOPT" bench --frobnicate
grep -q "kopt: error: bench: unknown option '--frobnicate'" "$WORK/err" || { cat "$WORK/err"; fail "not named"; }
run 2 "$KOPT" tune "${fam[@]}" --chunck 4
grep -q "unknown option '--chunck', did you mean '--chunk'?" "$WORK/err" || { cat "$WORK/err"; fail "no hint"; }
echo "--- a missing required option and a bad value exit 2 too (not CLI11's 106 / 105)"
(cd "$WORK" && run 2 "$KOPT" bench --candidate 01)
grep -q "kopt: error: no family given (--spec and --state-dir) and none configured in $WORK or a folder above it" \
  "$WORK/err" || { cat "$WORK/err"; fail "no family, no build folder"; }
run 2 "$KOPT" bench --spec "$spec" --candidate 01
grep -q "kopt: error: --spec was given without --state-dir" "$WORK/err" || { cat "$WORK/err"; fail "half a family"; }
run 2 "$KOPT" bench "${fam[@]}" --rounds one
echo "--- numeric options are finite and in range: nan, inf and negatives exit 2, naming the range"
for args in "decide --candidate 01 --noise nan" "decide --candidate 01 --confidence inf" \
  "decide --candidate 01 --max-regression -5" "record --candidate 01 --max-consecutive -1"; do
  run 2 "$KOPT" $args "${fam[@]}"
  grep -q "kopt: error: ${args%% *}: --[a-z-]*: expected a \(finite\|whole\) number" "$WORK/err" ||
    { cat "$WORK/err"; fail "not refused with its range: $args"; }
done
grep -qF -- "--max-consecutive: expected a whole number >= 1, got -1" "$WORK/err" || fail "range text"
run 0 "$KOPT" bench --help
run 0 "$KOPT" --version

echo "--- bench's identity refusal is the candidate's failed measurement: dated, BEST's beside it gone"
mkdir -p "$WORK/not-a-build" "$state/results/01"
echo '{}' >"$state/results/01/best_measurement.json"
run 1 "$KOPT" bench "${fam[@]}" --candidate 01 --identity-dir "$WORK/not-a-build" --json
json 'assert d["status"] == "failed" and d["reason"].startswith("identity: `ninja -C ") and d["date"], d' \
  "bench --identity-dir: the refusal's answer"
[ ! -e "$state/results/01/best_measurement.json" ] || fail "bench's identity refusal kept best_measurement.json"
cp "$WORK/out" "$WORK/refusal.json"
python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); assert a==b, (a,b)" \
  "$WORK/refusal.json" "$state/results/01/measurement.json" || fail "the answer is not the measurement written"
rm -rf "$state/results" "$state/locks" # the state folder empty again

echo "--- --json after a nested subcommand: capture merge ... --json prints JSON"
printf '# kopt capture: family=host_gemm calls=3 shapes=1 max=4096 overflow=0\nM,N,K,count\n16,64,64,3\n' \
  >"$WORK/cap.csv"
run 0 "$KOPT" capture merge "$WORK/cap.csv" --spec "$spec" --out "$WORK/configs.csv" --json
json 'assert d["shapes"] == 1 and d["calls"] == 3, d' "capture merge --json"
run 0 "$KOPT" capture --json merge "$WORK/cap.csv" --spec "$spec" --out "$WORK/configs.csv"
json 'assert d["shapes"] == 1, d' "capture --json merge"
run 0 "$KOPT" heuristic --json fit --help

echo "--- status without a ledger: a JSON object with an error, exit 1"
run 1 "$KOPT" status "${fam[@]}" --json
json 'assert d["family"] == "host_gemm" and "no ledger yet" in d["error"], d' "status --json"
run 1 "$KOPT" status "${fam[@]}"
grep -q "host_gemm: no ledger yet" "$WORK/out" || fail "status text"

echo "--- a mistyped --state-dir is an error, not 'no ledger yet'"
for sub in status ls log; do
  run 2 "$KOPT" $sub --spec "$spec" --state-dir "$WORK/stat" --json
  grep -q -- "--state-dir $WORK/stat: no such folder" "$WORK/err" || { cat "$WORK/err"; fail "$sub: state dir"; }
done
echo "--- a folder that is not a family's state folder is told apart from an empty ledger"
run 2 "$KOPT" status --spec "$spec" --state-dir "$family_src"
grep -q -- "--state-dir $family_src: not a family's state folder" "$WORK/err" || { cat "$WORK/err"; fail "wrong folder"; }

echo "--- heuristic eval: one --ties"
run 0 "$KOPT" heuristic eval --help
grep -q -- "--ties" "$WORK/out" || fail "no --ties"
if grep -Eq -- "--tie( |$)" "$WORK/out"; then fail "eval still lists --tie"; fi
run 2 "$KOPT" heuristic eval --results x.csv --tie 0.02
grep -q "unknown option '--tie', did you mean '--ties'?" "$WORK/err" || { cat "$WORK/err"; fail "--tie"; }

echo "--- ls and log: JSON before anything is built or recorded"
run 0 "$KOPT" ls "${fam[@]}" --json
json 'assert [c["id"] for c in d] == ["00", "01", "02", "03"], d
assert d[1]["base"] == "00" and len(d[1]["hash"]) > 8 and d[1]["built"] is False, d[1]
assert d[1]["measured"] == "" and d[1]["verdict"] == "" and d[1]["recorded"] == "", d[1]' "ls --json"
run 0 "$KOPT" ls "${fam[@]}"
head -1 "$WORK/out" | grep -q "^id  *base  *hash  *built  *measured  *verdict  *recorded  *hypothesis" ||
  { cat "$WORK/out"; fail "ls header"; }
run 0 "$KOPT" log "${fam[@]}" --json
json 'assert d == [], d' "log --json"

echo "--- with --json every error is a JSON object on stdout too"
run 2 "$KOPT" status --spec "$spec" --state-dir "$WORK/stat" --json
json 'assert "no such folder" in d["error"], d' "an error under --json"
run 2 "$KOPT" tune "${fam[@]}" --chunck 4 --json
json 'assert d["error"].startswith("tune: unknown option"), d' "a usage error under --json"
run 2 "$KOPT" round "${fam[@]}" --id 42 --json
json 'assert "42" in d["error"] and set(d) == {"error"}, d' "kopt round's exit 2 under --json (AGENTS.md)"
echo "ok"
