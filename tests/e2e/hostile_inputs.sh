# Hostile shapes of an input, given to the real kopt with no build:
# invalid UTF-8 in an error under --json prints JSON and exits 2 (not 134); an attempts.jsonl
# line nested 100,000 deep is an error naming file:line and the limit (not SIGSEGV); /dev/zero
# through a link, a file over its size limit and a tool whose output never ends are errors naming
# the file (or tool) and the limit (not std::bad_alloc); a FIFO where a file should be is named
# as one at once (never a hang).
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need python3
need mkfifo

copy_host_family
spec=$family_src/family.json
state=$WORK/state
ledger=$state/ledger
mkdir -p "$ledger"
fam=(--spec "$spec" --state-dir "$state")
run() { # run <expected exit> <command...>: stdout in $WORK/out, stderr in $WORK/err; 10 s at most
  local want=$1 rc=0
  shift
  timeout 10 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -ne 124 ] || fail "hung (a FIFO opened for reading?): $*"
  [ "$rc" -eq "$want" ] || { cat "$WORK/out" "$WORK/err"; fail "exit $rc, expected $want: $*"; }
}
says() { grep -qF -- "$1" "$WORK/err" || { cat "$WORK/err"; fail "the error does not say: $1"; }; }
json_error() { # stdout is one JSON object whose "error" holds $1
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert sys.argv[2] in d["error"], d' \
    "$WORK/out" "$1" || { cat "$WORK/out"; fail "stdout is not JSON with an error saying $1"; }
}

echo "--- 1. invalid UTF-8 in an error under --json: JSON on stdout, exit 2"
run 2 "$KOPT" version --json $'--\xffx'
json_error "unknown option"
run 2 "$KOPT" status --json --spec "$WORK/x"$'\xff'".json" --state-dir "$state"
json_error ".json"
cand=$family_src/candidates/01/candidate.json
cp "$cand" "$WORK/candidate.json.good"
printf '{"id": "01", "base": "00", "hypothesis": "caf\xe9", "target": "global"}\n' >"$cand"
run 2 "$KOPT" ls "${fam[@]}" --json
json_error "candidate.json"
says "$cand"
cp "$WORK/candidate.json.good" "$cand"

echo "--- 2. an attempts.jsonl line nested 100,000 deep: file:line and the limit, no SIGSEGV"
python3 -c 'import sys; sys.stdout.write("[" * 100000 + "]" * 100000 + "\n")' >"$ledger/attempts.jsonl"
run 2 "$KOPT" log "${fam[@]}"
says "$ledger/attempts.jsonl:1:257: invalid JSON: nested deeper than 256 levels"
run 2 "$KOPT" log "${fam[@]}" --json
json_error "nested deeper than 256 levels"
rm "$ledger/attempts.jsonl"

echo "--- 3. /dev/zero through a link, a file over its limit, a tool without end: named, no bad_alloc"
ln -s /dev/zero "$ledger/state.json"
run 2 "$KOPT" status "${fam[@]}"
says "$ledger/state.json: is a character device, not a regular file"
rm "$ledger/state.json"
truncate -s 65M "$ledger/state.json" # sparse: no disk
run 2 "$KOPT" status "${fam[@]}" --json
json_error "$ledger/state.json: larger than 64 MiB, the most kopt reads from a JSON file"
rm "$ledger/state.json"
ln -s /dev/urandom "$WORK/full.csv"
run 2 "$KOPT" heuristic fit --results "$WORK/full.csv" --out "$WORK/rules.json"
says "$WORK/full.csv: is a character device, not a regular file"
mkdir -p "$WORK/bin"
printf '#!/bin/sh\ncase "$1" in --query-gpu=*) exec yes ;; esac\nexit 0\n' >"$WORK/bin/nvidia-smi"
chmod +x "$WORK/bin/nvidia-smi"
PATH=$WORK/bin:$PATH run 1 "$KOPT" gpus --sample-gap 0
says "nvidia-smi --query-gpu="
says "stopped: its output passed 256 MiB, the most kopt reads from a program"

echo "--- 4. a FIFO where a file should be: named at once, never a hang"
mkfifo "$ledger/state.json"
run 2 "$KOPT" status "${fam[@]}"
says "$ledger/state.json: is a FIFO, not a regular file"
rm "$ledger/state.json"
mkfifo "$ledger/attempts.jsonl"
run 2 "$KOPT" log "${fam[@]}"
says "$ledger/attempts.jsonl: is a FIFO, not a regular file"
rm "$ledger/attempts.jsonl"
mkfifo "$WORK/family.json"
run 2 "$KOPT" ls --spec "$WORK/family.json" --state-dir "$state" --json
json_error "$WORK/family.json: is a FIFO, not a regular file"
mkfifo "$WORK/tuned.csv"
run 2 "$KOPT" heuristic fit --results "$WORK/tuned.csv" --out "$WORK/rules.json"
says "$WORK/tuned.csv: is a FIFO, not a regular file"
echo "PASS"
