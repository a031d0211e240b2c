# Live progress of kopt tune: on a terminal (under script(1)) one status line rewritten in place,
# counting rows with the time elapsed and left; piped, plain lines without a control character;
# --quiet, none.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need script
need python3

copy_host_family
b=$WORK/b
state=$b/kopt/host_gemm
fam=(--spec "$family_src/family.json" --state-dir "$state")
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
"$KOPT" bench "${fam[@]}" --golden-only --build-dir "$b" >"$WORK/golden.log" 2>&1 ||
  { cat "$WORK/golden.log"; fail "golden"; }
configs=$(($(wc -l <"$family_src/configs.csv") - 1))

echo "--- on a terminal: one status line, rewritten as chunks end"
TERM=xterm script -q -e -c "'$KOPT' tune ${fam[*]} --kernels gemm_16x64x64,gemm_32x32x32 --chunk 3 \
  --repeat 2 --warmup 0" "$WORK/tty.log" >/dev/null || { cat "$WORK/tty.log"; fail "tune on a tty"; }
python3 - "$WORK/tty.log" "$configs" <<'PY' || { cat -v "$WORK/tty.log"; fail "the status line"; }
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read()
rows = 2 * int(sys.argv[2])
# Each update goes back to the line's start and erases what is left of the older one.
updates = re.findall(r"\r\[(\d+)/(\d+)\] elapsed \d+:\d\d[^\r\n\x1b]*\x1b\[K", text)
assert len(updates) >= 10, updates  # begin, and a start and an end per chunk of 3 configs
assert all(int(total) == rows for _, total in updates), updates
done = [int(d) for d, _ in updates]
assert done == sorted(done) and done[-1] == rows and len(set(done)) >= 5, done
assert re.search(r"~\d+:\d\d left", text), "no time left shown"
# The status line is not a new line per update: far fewer line ends than updates.
lines = text.count("\n")
assert lines < len(updates), (lines, len(updates))
assert "wrote " in text, "the result is missing"
print(f"{len(updates)} status updates, {lines} lines")
PY

echo "--- piped: plain lines, no control characters"
"$KOPT" tune "${fam[@]}" --kernels gemm_64x64x64 --chunk 5 --repeat 2 --warmup 0 >"$WORK/piped.log" 2>&1 ||
  { cat "$WORK/piped.log"; fail "tune piped"; }
python3 - "$WORK/piped.log" "$configs" <<'PY' || { cat -v "$WORK/piped.log"; fail "piped output"; }
import re, sys
text = open(sys.argv[1], newline="").read()
bad = [c for c in text if ord(c) < 32 and c != "\n" or ord(c) == 127]
assert not bad, "control characters: " + repr(sorted(set(bad)))
n = int(sys.argv[2])
assert f"tune: {n} rows to measure (1 kernels), 0 reused" in text, text
assert re.search(rf"^\[{n}/{n}\] elapsed \d+:\d\d, ~0:00 left: tune: gemm_64x64x64 on configs", text, re.M), text
PY

echo "--- --quiet: no progress at all, the result stays"
"$KOPT" tune "${fam[@]}" --kernels gemm_64x32x64 --repeat 2 --warmup 0 --quiet >"$WORK/quiet.log" 2>&1 ||
  { cat "$WORK/quiet.log"; fail "tune --quiet"; }
if grep -q "elapsed\|rows to measure" "$WORK/quiet.log"; then cat "$WORK/quiet.log"; fail "--quiet printed progress"; fi
grep -q "^wrote " "$WORK/quiet.log" || { cat "$WORK/quiet.log"; fail "no result"; }
