#!/usr/bin/env bash
# The family through the user's flow on a GPU, in one call:
#   KOPT_DEPS=<prefix with include/{nlohmann,CLI,xxhash.h}> bash examples/cuda_paged_decode/bench/device_run.sh
# 1. kopt built and installed from this tree into .device/kopt (skipped when KOPT_PREFIX names
#    an install);
# 2. a copy of the family under $KOPT_PAGED_WORK (/tmp/kopt-paged) with the wrong fixture
#    tests/fixtures/wrong/cuda_paged_decode/causal_off_by_one as candidate 90, every candidate
#    built (nvcc, sm_90a);
# 3. each candidate's harness --correctness against the golden (the errors per config);
# 4. kopt round of the baseline (00, or the landed BEST; recorded as BEST), each other candidate in id order, then 90,
#    which must be incorrect naming every mtp > 1 config and no mtp = 1 one;
# 5. with KOPT_PAGED_AA=N, N A/As of BEST (candidates 91..), each a round against it.
# KOPT_PAGED_IDS="02 04" (ids, space separated) builds, checks and rounds only those, in that order
# (the first becomes BEST: with no ledger yet its round measures it beside the baseline, which
# is built for that), then 90 if listed; the default is every candidate and 90, as above.
# KOPT_PAGED_LEDGER=<attempts.jsonl> (a path in this tree) continues that ledger: it is copied into
# the state folder and `kopt ledger rebuild` remakes its state.json before the rounds, so BEST is
# the ledger's and each round adds to its history (BEST must be among the built candidates: list it
# in KOPT_PAGED_IDS; its round then answers "identical").
# KOPT_PAGED_ANALYZE="04 05" runs `kopt analyze` (ncu, one config per class) on those candidates
# after the rounds; the answers go to analyze_<id>.txt (ncu's data: the state folder's
# results/<id>/analyze/).
# KOPT_PAGED_REBASE="<reason>": after the ledger is continued, `kopt rebase` (BEST measured again
# and recorded, for a family.json change every candidate compiles).
# KOPT_PAGED_TUNE="06": `kopt tune` of that candidate on bench/tune_configs.csv after the rounds,
# over KOPT_PAGED_TUNE_KERNELS (comma separated; default every instance); full.csv and tuned.csv
# stay in the state folder's tune/<id>/.
# Results: $OUT/summary.txt (bench/summary.py's table), $OUT/machine.txt and $OUT/paged.tgz (the
# state folder without the golden; the rounds' answers and logs, under paged/ while it runs).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
family=cuda_paged_decode
out=${OUT:-/tmp/kopt-out}/paged
work=${KOPT_PAGED_WORK:-/tmp/kopt-paged}
prefix=${KOPT_PREFIX:-$root/.device/kopt}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv
  nvcc --version | tail -1; nproc; echo "tree: ${KOPT_TREE_COMMIT:-$(git -C "$root" log -1 --format=%H 2>/dev/null)}"; } >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
if [ ! -x "$prefix/bin/kopt" ]; then
  s=$SECONDS
  { cmake -S "$root" -B "$root/.device/kopt-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DKOPT_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="${KOPT_DEPS:?set KOPT_DEPS}" &&
    cmake --build "$root/.device/kopt-build" -j "$(nproc)" &&
    cmake --install "$root/.device/kopt-build" --prefix "$prefix" --strip; } >"$out/kopt-build.log" 2>&1 ||
    { tail -30 "$out/kopt-build.log"; exit 1; }
  echo "kopt built in $((SECONDS - s)) s"
fi
kopt=$prefix/bin/kopt
rm -rf "$work" && mkdir -p "$work"
cp -r "$root/examples/$family" "$work/src"
fixture=$root/tests/fixtures/wrong/$family/causal_off_by_one
picked=${KOPT_PAGED_IDS:-}
if [ -z "$picked" ] || [[ " $picked " == *" 90 "* ]]; then
  mkdir "$work/src/candidates/90" &&
    cp "$fixture/candidate.json" "$fixture/paged_kernel.cuh" "$fixture/instance.cu.in" "$work/src/candidates/90/"
fi
# The baseline (00, or the landed BEST): the candidate whose candidate.json names no base.
base=$(bash "$root/examples/$family/bench/baseline_id.sh" "$work/src/candidates" | head -1)
if [ -n "$picked" ]; then # the listed order, 90 last
  ids=$(for id in $picked; do [ "$id" = 90 ] || echo "$id"; done; [[ " $picked " != *" 90 "* ]] || echo 90)
  for id in $ids; do
    [ -d "$work/src/candidates/$id" ] || { echo "KOPT_PAGED_IDS: no candidate $id in $root/examples/$family/candidates"; exit 1; }
  done
  rounds=$ids
else
  ids=$(cd "$work/src/candidates" && ls)
  rounds="$base $(echo "$ids" | grep -v "^$base\$")"
fi
b=$work/build
s=$SECONDS
cmake -S "$work/src" -B "$b" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DKOPT_USE_CCACHE=OFF >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
# shellcheck disable=SC2086
targets=$(printf 'candidate_%s\n' "$base" $ids | sort -u) # the baseline: the first round's BEST side
# shellcheck disable=SC2086
cmake --build "$b" -j "$(nproc)" --target $targets >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
echo "family built in $((SECONDS - s)) s: $(echo $ids)"
state=$b/kopt/$family
cd "$b" || exit 1
if [ -n "${KOPT_PAGED_LEDGER:-}" ]; then
  mkdir -p "$state/ledger" && cp "$root/$KOPT_PAGED_LEDGER" "$state/ledger/attempts.jsonl" &&
    "$kopt" ledger rebuild >"$out/ledger_rebuild.txt" 2>&1
  echo "ledger from $KOPT_PAGED_LEDGER: rc $? ($(tail -1 "$out/ledger_rebuild.txt"))"
fi
if [ -n "${KOPT_PAGED_REBASE:-}" ]; then
  s=$SECONDS
  "$kopt" rebase --reason "$KOPT_PAGED_REBASE" >"$out/rebase.txt" 2>&1
  echo "rebase: rc $? in $((SECONDS - s)) s: $(tail -3 "$out/rebase.txt")"
fi
for id in $ids; do
  s=$SECONDS
  "$state/bin/candidate_$id" --configs "$work/src/configs.csv" --correctness \
    --out "$out/correctness_$id.csv" >"$out/correctness_$id.log" 2>&1
  echo "correctness $id: rc $? in $((SECONDS - s)) s"
done
for id in $rounds; do
  s=$SECONDS
  "$kopt" round --id "$id" --json >"$out/round_$id.json" 2>"$out/round_$id.log"
  rc=$?
  echo "round $id: rc $rc ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("verdict"))' "$out/round_$id.json" 2>/dev/null)) in $((SECONDS - s)) s"
  [ $rc -le 5 ] || tail -20 "$out/round_$id.log"
done
# KOPT_PAGED_AA=N: N A/As of BEST, candidates 91.. (BEST's kernel header plus one comment line:
# the same machine code, another content hash), each a round against BEST.
best=$("$kopt" status 2>/dev/null | sed -n 's/^BEST: \([0-9]*\).*/\1/p')
for n in $(seq 1 "${KOPT_PAGED_AA:-0}"); do
  id=9$n
  dir=$work/src/candidates/$id
  from=$work/src/candidates/$best/paged_kernel.cuh
  [ -f "$from" ] || from=$work/src/paged_kernel.cuh
  mkdir -p "$dir" && { cat "$from"; echo "// A/A $n: this comment changes the content hash, not the code"; } >"$dir/paged_kernel.cuh"
  echo '{"id": "'"$id"'", "base": "'"$best"'", "hypothesis": "A/A of '"$best"'", "target": "global"}' >"$dir/candidate.json"
  s=$SECONDS
  "$kopt" round --id "$id" --json >"$out/round_$id.json" 2>"$out/round_$id.log"
  echo "A/A $id of $best: rc $? ($(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("verdict"), " | ".join("%s %+.1f%% [%+.1f, %+.1f]" % (c["class"], 100 * c["change"], 100 * (c["low"] or 0), 100 * (c["high"] or 0)) for c in d.get("classes") or []))' "$out/round_$id.json" 2>/dev/null)) in $((SECONDS - s)) s"
done
"$kopt" status >"$out/status.txt" 2>&1
for id in ${KOPT_PAGED_TUNE:-}; do
  s=$SECONDS
  "$kopt" tune --candidate "$id" --configs "$work/src/bench/tune_configs.csv" --quiet \
    ${KOPT_PAGED_TUNE_KERNELS:+--kernels "$KOPT_PAGED_TUNE_KERNELS"} >"$out/tune_$id.txt" 2>&1
  echo "tune $id: rc $? in $((SECONDS - s)) s: $(tail -3 "$out/tune_$id.txt")"
done
for id in ${KOPT_PAGED_ANALYZE:-}; do
  s=$SECONDS
  "$kopt" analyze --candidate "$id" --quiet >"$out/analyze_$id.txt" 2>&1
  echo "analyze $id: rc $? in $((SECONDS - s)) s"
  cat "$out/analyze_$id.txt"
done
python3 "$root/examples/$family/bench/summary.py" "$work/src/configs.csv" "$out" "$state" | tee "$out/summary.txt"
# One archive (the device returns few files): the state folder without the golden, and $out.
# Without the traces, tune's chunks and the candidates' executables (tens of MB after ten A/As).
tar czf "$out/../paged.tgz" --exclude=golden.bin --exclude=rounds --exclude=work \
  --exclude='*cupti_trace.csv' --exclude="$family/bin" \
  -C "$b/kopt" "$family" -C "$out" . 2>/dev/null
cp "$out/summary.txt" "$out/machine.txt" "$out/.." && rm -rf "$out"
ls -la "$(dirname "$out")"
