# Shape capture end to end on the host example: a real build of candidate 00, two harness runs
# with KOPT_CAPTURE (one with KOPT_CAPTURE_MAX below the config count), `kopt capture merge`
# into a configs file whose shapes and counts are the harness's, and the harness runs on it.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

family_src=$KOPT_SOURCE_DIR/examples/host_gemm
b=$WORK/b
state=$b/kopt/host_gemm
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" || { cat "$WORK/configure.log"; fail "configure"; }
cmake --build "$b" --target candidate_00 >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "build"; }
harness=$state/bin/candidate_00
configs=$family_src/configs.csv
shapes=$(($(wc -l <"$configs") - 1))

"$harness" --configs "$configs" --correctness --out "$WORK/off.csv" >/dev/null || fail "harness without capture"
ls "$WORK"/cap* 2>/dev/null && fail "a capture file without KOPT_CAPTURE"

KOPT_CAPTURE=$WORK/cap1.csv "$harness" --configs "$configs" --correctness --out "$WORK/r1.csv" >/dev/null ||
  fail "harness run 1"
KOPT_CAPTURE=$WORK/cap2.csv "$harness" --configs "$configs" --correctness --out "$WORK/r2.csv" >/dev/null ||
  fail "harness run 2"
grep -q "shapes=$shapes max=4096 overflow=0" "$WORK/cap1.csv" || { cat "$WORK/cap1.csv"; fail "cap1 totals"; }
ls "$WORK"/*.tmp 2>/dev/null && fail "a temp file was left behind"

"$KOPT" capture merge "$WORK/cap1.csv" "$WORK/cap2.csv" --spec "$family_src/family.json" \
  --out "$WORK/captured.csv" || fail "capture merge"
header=$(head -1 "$configs")
{ echo "$header,count"; tail -n +2 "$configs" | sed 's/$/,2/' | sort -u; } | sort >"$WORK/expected.csv"
sort "$WORK/captured.csv" | diff "$WORK/expected.csv" - || fail "merged configs differ from the harness's shapes x 2"

# The bound: 2 shapes kept, the other calls counted as overflow, and merge warns about them.
KOPT_CAPTURE=$WORK/cap3.csv KOPT_CAPTURE_MAX=2 "$harness" --configs "$configs" --correctness \
  --out "$WORK/r3.csv" >/dev/null || fail "harness run 3"
grep -q "shapes=2 max=2 overflow=$((shapes - 2))" "$WORK/cap3.csv" || { cat "$WORK/cap3.csv"; fail "bound"; }
"$KOPT" capture merge "$WORK/cap3.csv" --spec "$family_src/family.json" --out "$WORK/c3.csv" \
  2>"$WORK/merge3.err" || fail "merge 3"
grep -q "raise KOPT_CAPTURE_MAX" "$WORK/merge3.err" || fail "no overflow warning"

# The merged file is a configs file the harness runs as it is (count is an extra column).
"$harness" --configs "$WORK/captured.csv" --correctness --out "$WORK/r4.csv" >/dev/null ||
  fail "harness on the merged configs"

# Bad input names the file, line and column.
printf 'M,N,K,count\n1,2,x,1\n' >"$WORK/bad.csv"
"$KOPT" capture merge "$WORK/bad.csv" --spec "$family_src/family.json" --out "$WORK/c5.csv" \
  2>"$WORK/bad.err" && fail "bad capture accepted"
grep -q "bad.csv:2: K: expected an integer, got 'x'" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "bad message"; }
echo "capture: ok ($shapes shapes)"
