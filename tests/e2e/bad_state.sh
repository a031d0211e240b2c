# Files kopt wrote, damaged afterwards (a killed process, a bad edit): a truncated state.json, a
# garbage measurement.json, an attempts.jsonl whose last line was cut or that holds garbage. Each
# command that reads one fails with an error naming that file (attempts.jsonl: file:line), and no
# file of the state changes; once repaired, the next record appends a whole line. Then verdicts
# bound to content: a measurement of another candidate, a decision.json whose hash was forged and
# a candidate edited after its decision are refused by decide and record, naming the file.
# Last, a family and its build in a folder whose name holds a quote, `$x`, `@x@`, a space and
# non-ASCII, with ccache: configures, builds, is correct, gets a keep (its bench checks its
# identity), and kopt run in the build folder finds the family there.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

copy_host_family
host_family_with_baseline candidate_00 candidate_01
{ "$KOPT" bench "${kopt_family[@]}" --candidate 01 &&
    "$KOPT" decide "${kopt_family[@]}" --candidate 01; } >"$WORK/setup.log" 2>&1 ||
  { cat "$WORK/setup.log"; fail "deciding 01"; }

snapshot() { (cd "$state" && find . -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha256sum) >"$1"; }
expect_error_naming() { # <file> <command...>: fails, the error names the file, nothing else moved
  local file=$1
  shift
  snapshot "$WORK/before"
  if "$@" >"$WORK/out.log" 2>&1; then cat "$WORK/out.log"; fail "succeeded on a damaged $file: $*"; fi
  grep -qF -- "$file" "$WORK/out.log" || { cat "$WORK/out.log"; fail "the error does not name $file"; }
  grep -q "terminate called\|Segmentation" "$WORK/out.log" && fail "crashed: $(cat "$WORK/out.log")"
  snapshot "$WORK/after"
  diff "$WORK/before" "$WORK/after" || fail "a failing command changed the state folder"
  echo "ok: $(head -1 "$WORK/out.log")"
}

echo "--- state.json cut in half"
cp "$state/ledger/state.json" "$WORK/state.json.good"
head -c 40 "$WORK/state.json.good" >"$state/ledger/state.json"
expect_error_naming "$state/ledger/state.json" "$KOPT" status "${kopt_family[@]}"
expect_error_naming "$state/ledger/state.json" "$KOPT" record "${kopt_family[@]}" --candidate 01
cp "$WORK/state.json.good" "$state/ledger/state.json"

echo "--- measurement.json of garbage"
m=$state/results/01/measurement.json
cp "$m" "$WORK/measurement.json.good"
printf '\x00\x01garbage{' >"$m"
expect_error_naming "$m" "$KOPT" decide "${kopt_family[@]}" --candidate 01
cp "$WORK/measurement.json.good" "$m"

echo "--- attempts.jsonl whose last line was cut, then of garbage: errors name file:line"
attempts=$state/ledger/attempts.jsonl
cp "$attempts" "$WORK/attempts.good"
lines=$(wc -l <"$attempts")
printf '{"candidate": "5' >>"$attempts"
expect_error_naming "$attempts:$((lines + 1)):" "$KOPT" record "${kopt_family[@]}" --candidate 01
expect_error_naming "$attempts:$((lines + 1)):" "$KOPT" status "${kopt_family[@]}"
printf 'garbage\x00\n' >"$attempts"
expect_error_naming "$attempts:1:" "$KOPT" record "${kopt_family[@]}" --candidate 01
printf '{"kind": "attempt", "date": "2026-11-25"}\n' >"$attempts"
expect_error_naming "$attempts:1: missing field 'candidate'" "$KOPT" record "${kopt_family[@]}" --candidate 01

echo "--- attempts.jsonl repaired: the record goes through and its line is whole"
cp "$WORK/attempts.good" "$attempts"
"$KOPT" record "${kopt_family[@]}" --candidate 01 >"$WORK/record.log" 2>&1 ||
  { cat "$WORK/record.log"; fail "record after attempts.jsonl was repaired"; }
tail -1 "$attempts" | python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); assert r["candidate"] == "01", r' ||
  fail "the new attempt is not a whole JSON line of its own: $(tail -2 "$attempts")"
[ "$(wc -l <"$attempts")" -eq $((lines + 1)) ] || fail "expected one more line in attempts.jsonl"
echo "ok: the record after the repair is whole"

echo "--- verdicts bound to content: a foreign measurement, a forged decision, 01 edited after it"
m=$state/results/01/measurement.json
d=$state/results/01/decision.json
cp "$m" "$WORK/measurement.json.good"
cp "$d" "$WORK/decision.json.good"
set_field() { # file key value: a hand edit of one top-level field
  python3 -c 'import json, sys; p, k, v = sys.argv[1:]; j = json.load(open(p)); j[k] = v; json.dump(j, open(p, "w"))' "$@"
}
set_field "$m" candidate 00
expect_error_naming "$m: candidate: expected 01, got 00: a measurement of another candidate" \
  "$KOPT" decide "${kopt_family[@]}" --candidate 01
grep -q "verdict: keep" "$WORK/out.log" && fail "a measurement of BEST decided keep for 01"
cp "$WORK/measurement.json.good" "$m"

set_field "$d" hash abc
set_field "$d" verdict keep
expect_error_naming "$d: hash: expected" "$KOPT" record "${kopt_family[@]}" --candidate 01
grep -qF "got abc" "$WORK/out.log" || fail "the error does not name the forged hash: $(cat "$WORK/out.log")"
cp "$WORK/decision.json.good" "$d"

kernel=$family_src/candidates/01/gemm_kernel.hpp
cp "$kernel" "$WORK/gemm_kernel.hpp.good"
echo "// edited after its decision" >>"$kernel"
expect_error_naming "$d: hash: expected" "$KOPT" record "${kopt_family[@]}" --candidate 01
grep -qF "run kopt decide --candidate 01 again" "$WORK/out.log" || fail "no way out named"
cp "$WORK/gemm_kernel.hpp.good" "$kernel"

echo "--- a family and its build in a folder named with a quote, \$x, @x@, a space and non-ASCII"
# ninja's depfiles end a name at a quote; ccache reads `$x` in its settings as a variable (unset),
# file(CONFIGURE) reads `@x@` as one.
odd="$WORK/it's \$x @x@ dir é"
mkdir -p "$odd"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$odd/host_gemm"
family_src=$odd/host_gemm
small_host_spec
ob=$odd/b
unset x
{ cmake -S "$family_src" -B "$ob" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=ON &&
    cmake --build "$ob" --target candidate_00 candidate_01; } >"$WORK/odd.log" 2>&1 ||
  { cat "$WORK/odd.log"; fail "configure and build in $odd"; }
if command -v ccache >/dev/null; then
  # Each compile's ccache stats log lies beside its object, not where a `$x` expanded to.
  stats=$(find "$ob" -name '*.o.kopt-ccache' | wc -l)
  [ "$stats" -gt 0 ] || { cat "$WORK/odd.log"; fail "no ccache stats log beside an object in $ob"; }
fi
for label in correctness keep; do
  ctest --test-dir "$ob" -L $label -R '^candidate_01\.' --output-on-failure >"$WORK/odd.log" 2>&1 ||
    { cat "$WORK/odd.log"; fail "ctest -L $label -R candidate_01 in $odd"; }
done
expect_verdict "$ob/kopt/host_gemm/results/01/decision.json" keep
(cd "$ob" && "$KOPT" ls --json >"$WORK/odd.json" 2>"$WORK/odd.log") ||
  { cat "$WORK/odd.log"; fail "kopt ls in $ob (the family the configure registered)"; }
[ "$(json_get "$WORK/odd.json" 1 id)" = 01 ] || fail "kopt ls in $ob: $(cat "$WORK/odd.json")"
echo "ok: configured, built, correct and kept in $odd"
