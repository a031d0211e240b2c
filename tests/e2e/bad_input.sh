# Bad input fails with a message that names the file and the field, at configure time for
# specs and at build time for tuned tables.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

fresh() { rm -rf "$WORK/f"; cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$WORK/f"; }
expect_error() { # expect_error <pattern> <command...>: the command fails, stderr matches
  local pattern=$1; shift
  if "$@" >"$WORK/out.log" 2>&1; then cat "$WORK/out.log"; fail "succeeded: $*"; fi
  grep -Eq -- "$pattern" "$WORK/out.log" || { cat "$WORK/out.log"; fail "no '$pattern' in the error"; }
}
gen() { "$KOPT" gen-instances --spec "$WORK/f/family.json" --out-root "$WORK/gen"; }

echo "--- malformed family.json: cmake's configure names the file, line and column"
fresh
sed -i '0,/"backend"/s/"backend"/"backend" "oops"/' "$WORK/f/family.json"
expect_error "family\.json:[0-9]+:[0-9]+: invalid JSON" \
  cmake -S "$WORK/f" -B "$WORK/b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR"

echo "--- an unknown field in family.json"
fresh
sed -i 's/"timeout_s"/"timeout_secs"/' "$WORK/f/family.json"
expect_error "family\.json: .*timeout_secs.*did you mean 'timeout_s'" gen

echo "--- an unknown template field"
fresh
echo "// {{tile_m}}" >>"$WORK/f/instance.cpp.in"
expect_error "instance\.cpp\.in:[0-9]+: unknown placeholder '\{\{tile_m\}\}'" gen

echo "--- a candidate folder without candidate.json: skipped, with a warning naming it"
fresh
mkdir "$WORK/f/candidates/scratch"
gen >"$WORK/out.log" 2>&1 || { cat "$WORK/out.log"; fail "a scratch folder stops gen-instances"; }
grep -q "kopt: warning: .*candidates/scratch: no candidate.json, so not a candidate (skipped)" \
  "$WORK/out.log" || { cat "$WORK/out.log"; fail "no warning naming the scratch folder"; }
[ ! -e "$WORK/gen/scratch" ] || fail "a scratch folder was generated as a candidate"
mkdir -p "$WORK/ls-state"
"$KOPT" ls --spec "$WORK/f/family.json" --state-dir "$WORK/ls-state" >"$WORK/out.log" 2>&1 ||
  { cat "$WORK/out.log"; fail "a scratch folder stops kopt ls"; }
grep -q "kopt: warning: .*candidates/scratch: no candidate.json" "$WORK/out.log" ||
  { cat "$WORK/out.log"; fail "kopt ls does not name the scratch folder"; }
cmake -S "$WORK/f" -B "$WORK/b-scratch" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  >"$WORK/out.log" 2>&1 || { cat "$WORK/out.log"; fail "a scratch folder stops the configure step"; }
grep -q "candidates/scratch: no" "$WORK/out.log" ||
  { cat "$WORK/out.log"; fail "the configure step does not name the scratch folder"; }

echo "--- a target that is no config class: refused when the candidates are read"
fresh
sed -i 's/"target": *"[^"]*"/"target": "M<65"/' "$WORK/f/candidates/01/candidate.json"
expect_error "candidates/01/candidate\.json: target: 'M<65' is not a config class of configs\.csv \(classes: .*\); did you mean 'M<64'\?" gen
mkdir -p "$WORK/ls-state"
"$KOPT" ls --spec "$WORK/f/family.json" --state-dir "$WORK/ls-state" >"$WORK/out.log" 2>&1 ||
  { cat "$WORK/out.log"; fail "a bad target stops kopt ls"; }
grep -q "kopt: warning: .*target: 'M<65' is not a config class" "$WORK/out.log" ||
  { cat "$WORK/out.log"; fail "kopt ls does not name the bad target"; }

echo "--- a tuned row naming a kernel that is not compiled"
fresh
cat >"$WORK/f/tuned.csv" <<CSV
gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio
host,2,16,256,256,host,0,0,10.5,gemm_16x16x16,0.1,1,0
host,2,64,512,512,host,0,0,20.5,gemm_128x128x128,0.1,1,0
CSV
sed -i 's/"compile": "all"/"tuned": "tuned.csv", "arch": "host", "compile": "all"/' "$WORK/f/family.json"
expect_error "tuned\.csv:3: kernelName: 'gemm_128x128x128' is not a compiled instance" gen
echo "--- a configs value that is no integer: cmake's configure names file:line:column"
fresh
echo "128,abc,256" >>"$WORK/f/configs.csv"
line=$(wc -l <"$WORK/f/configs.csv")
expect_error "configs\.csv:$line:2: column 'N': expected an integer" \
  cmake -S "$WORK/f" -B "$WORK/b2" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR"

echo "--- a NUL byte in a configs value, and a config twice"
fresh
printf '3\0002,256,256\n' >>"$WORK/f/configs.csv"
expect_error "configs\.csv:$line:1: column 'M': expected no control bytes, got byte 0x00" gen
fresh
sed -n 2p "$WORK/f/configs.csv" >>"$WORK/f/configs.csv"
mkdir -p "$WORK/state"
expect_error "configs\.csv:$line: duplicate config M=16,N=256,K=256 \(first on line 2\)" \
  "$KOPT" ls --spec "$WORK/f/family.json" --state-dir "$WORK/state"
echo "PASS"
