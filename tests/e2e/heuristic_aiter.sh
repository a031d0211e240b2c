# Heuristics from aiter's own winners-only tuned table, with the real kopt: fit and eval read it
# as it is (no GPU), eval reports match rates and no slowdown, the seeded held-out split is the
# same every run, and bad tables fail with file:line.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need python3

table=$KOPT_SOURCE_DIR/tests/fixtures/aiter/a8w8_blockscale_tuned_gemm_qwen3_vl_32b.csv
tiles=(16x64 32x64 64x64 16x128 32x128 64x128 128x128 128x64 64x256)
features="M,N,K,M*N"
for t in "${tiles[@]}"; do features+=",fill($t,304),waves($t,304)"; done
for ((i = 0; i < ${#tiles[@]}; i++)); do
  for ((j = i + 1; j < ${#tiles[@]}; j++)); do features+=",waves(${tiles[i]},304)/waves(${tiles[j]},304)"; done
done

echo "--- fit on the whole table and score it: in sample >= 99%"
"$KOPT" heuristic fit --results "$table" --out "$WORK/h.json" --max-arms 16 --features "$features" \
  >"$WORK/fit.log" || { cat "$WORK/fit.log"; fail "fit"; }
"$KOPT" heuristic eval --results "$table" --heuristic "$WORK/h.json" --json >"$WORK/eval.json" || fail "eval"
"$KOPT" heuristic eval --results "$table" --heuristic "$WORK/h.json" >"$WORK/eval.txt" || fail "eval text"
python3 - "$WORK/eval.json" "$WORK/h.json" <<'PY' || fail "in-sample figures"
import json, sys
e = json.load(open(sys.argv[1]))
rules = json.load(open(sys.argv[2]))["rules"]
assert len(rules) <= 16 and "if" not in rules[-1], rules
assert e["winners_only"] and e["shapes"] == 8172, e["shapes"]
assert e["match"] >= 0.99, e["match"]
assert e["baseline_matched"] == 7833 and e["baseline"].endswith("256x128x128x128_16x16_32x32_2x2_8x32x1_8x32x1_1x32x1x8_8_1x1_intrawave_v3"), e["baseline"]
assert e["geomean_slowdown"] is None and e["worst_slowdown"] is None, e
assert len(e["groups"]) == 12 and len(e["misses"]) == e["shapes"] - e["matched"]
PY
grep -q "^geomean slowdown vs tuned: not measured" "$WORK/eval.txt" || { cat "$WORK/eval.txt"; fail "slowdown line"; }
grep -q "^worst slowdown vs tuned: not measured" "$WORK/eval.txt" || { cat "$WORK/eval.txt"; fail "worst line"; }

echo "--- hold out 30% of the (N,K) pairs by a seeded shuffle: the same split every run, >= 98.5%"
for run in 1 2; do
  "$KOPT" heuristic eval --results "$table" --holdout-seeded 0.3 --seed 1 --max-arms 16 \
    --features "$features" --json >"$WORK/held$run.json" || fail "holdout-seeded"
done
cmp -s "$WORK/held1.json" "$WORK/held2.json" || fail "two runs of one seeded split differ"
python3 - "$WORK/held1.json" <<'PY' || fail "held-out figures"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["held_out"] == ["N=25600,K=5120", "N=5120,K=1024", "N=5120,K=12800", "N=5120,K=6400"], e["held_out"]
assert e["shapes"] == 4 * 681, e["shapes"]
assert e["match"] >= 0.985, e["match"]
assert e["match"] > e["baseline_match"], e
PY
"$KOPT" heuristic eval --results "$table" --holdout "$(python3 -c "
import json; print(';'.join(g.replace('N=', '').replace('K=', '') for g in json.load(open('$WORK/held1.json'))['held_out']))")" \
  --max-arms 16 --features "$features" --json >"$WORK/held_named.json" || fail "the same split by --holdout"
python3 -c "
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a['matched'] == b['matched'], (a['matched'], b['matched'])" "$WORK/held1.json" "$WORK/held_named.json" ||
  fail "--holdout of the seeded groups scores differently"

echo "--- what a group is, in --help and in errors"
"$KOPT" heuristic eval --results "$table" --help >"$WORK/help.txt" || fail "help"
grep -q "a group of $table is N,K within its --group" "$WORK/help.txt" || { cat "$WORK/help.txt"; fail "help names the groups"; }
if "$KOPT" heuristic eval --results "$table" --holdout 5120 2>"$WORK/group.log"; then fail "a short group was accepted"; fi
grep -q "a group of $table (gfx942,304) is 2 values, N,K" "$WORK/group.log" || { cat "$WORK/group.log"; fail "group message"; }

echo "--- bad tables: a kernel the family lacks, a missing column, two winners for one shape, two groups"
if "$KOPT" heuristic fit --results "$table" --out "$WORK/x.json" \
  --spec "$KOPT_SOURCE_DIR/examples/hip_gemm_a8w8_blockscale/family.json" 2>"$WORK/family.log"; then
  fail "kernels outside the family were accepted"
fi
grep -q "$table:2: kernelName: 'a8w8_blockscale_1x128x128_256x16x64x256_16x16_16x16_1x1_16x16x1_16x16x1_1x16x1x16_4_1x1_intrawave_v1' is not an instance of family 'hip_gemm_a8w8_blockscale'" \
  "$WORK/family.log" || { cat "$WORK/family.log"; fail "family message"; }
cut -d, -f1-8,10- "$table" >"$WORK/no_us.csv"
if "$KOPT" heuristic fit --results "$WORK/no_us.csv" --out "$WORK/x.json" 2>"$WORK/column.log"; then fail "a table without us was accepted"; fi
grep -q "no_us.csv: missing column 'us'" "$WORK/column.log" || { cat "$WORK/column.log"; fail "column message"; }
{ cat "$table"; sed -n 2p "$table" | sed 's/_intrawave_v1,/_intrawave_v3,/'; } >"$WORK/dup.csv"
if "$KOPT" heuristic fit --results "$WORK/dup.csv" --out "$WORK/x.json" 2>"$WORK/dup.log"; then fail "two winners were accepted"; fi
grep -q "dup.csv:8174: duplicate shape M=16,N=5120,K=4096 with another winner" "$WORK/dup.log" || { cat "$WORK/dup.log"; fail "duplicate message"; }
{ cat "$table"; sed -n 2p "$table" | sed 's/^gfx942,304,/gfx950,256,/'; } >"$WORK/two.csv"
if "$KOPT" heuristic fit --results "$WORK/two.csv" --out "$WORK/x.json" 2>"$WORK/two.log"; then fail "two groups were mixed"; fi
grep -q "choose one with --group (groups: gfx942,304 (8172 rows); gfx950,256 (1 rows))" "$WORK/two.log" || { cat "$WORK/two.log"; fail "groups message"; }
"$KOPT" heuristic fit --results "$WORK/two.csv" --group gfx950,256 --out "$WORK/one.json" >/dev/null || fail "--group"
"$KOPT" heuristic fit --results "$table" --label kernelName+splitK --out "$WORK/split.json" >/dev/null || fail "--label"
grep -q '+splitK=0"' "$WORK/split.json" || { cat "$WORK/split.json"; fail "splitK labels"; }
echo "PASS"
