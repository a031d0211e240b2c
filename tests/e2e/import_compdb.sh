# kopt import from a build that is not CMake's: an aiter-shaped JIT build folder, a build.ninja
# written the way torch's cpp_extension writes one (rule cuda_compile, `$cxx -MMD -MF $out.d
# $cuda_cflags -c $in -o $out $cuda_post_cflags`; g++ here where aiter has hipcc), with option
# pairs (--param, as aiter's -mllvm) and a relative include folder. `kopt import --compdb` on the
# folder reads its `ninja -t compdb`; the host family built with the import compiles its
# instance TUs with the recorded arguments, in order, and passes `ctest -L correctness`.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

jit=$WORK/jit
mkdir -p "$jit/src" "$jit/build/module_gemm/include" "$jit/build/module_gemm/build"
echo 'int gemm_instances() { return 1; }' >"$jit/src/gemm_instances.cpp"
echo '#define MODULE_GEMM_CONFIG 1' >"$jit/build/module_gemm/include/module_config.h"
b=$jit/build/module_gemm/build
cat >"$b/build.ninja" <<NINJA
ninja_required_version = 1.3
cxx = g++
cuda_cflags = -DTORCH_EXTENSION_NAME=module_gemm -I../include -fPIC -std=c++17 -O3 --param max-inline-insns-single=400 --param inline-unit-growth=30 -DAITER_LIKE=1
cuda_post_cflags = -fno-math-errno

rule cuda_compile
  depfile = \$out.d
  deps = gcc
  command = \$cxx -MMD -MF \$out.d \$cuda_cflags -c \$in -o \$out \$cuda_post_cflags

rule link
  command = \$cxx \$in -shared -o \$out

build gemm_instances.cuda.o: cuda_compile $jit/src/gemm_instances.cpp
build module_gemm.so: link gemm_instances.cuda.o
default module_gemm.so
NINJA
ninja -C "$b" >"$WORK/jit.log" 2>&1 || { cat "$WORK/jit.log"; fail "the JIT build"; }

echo "--- kopt import --compdb on the build folder (no compile_commands.json: ninja -t compdb)"
"$KOPT" import --json --compdb "$b" --source "$jit/src/gemm_instances.cpp" --out "$WORK/jit.cmake" \
  >"$WORK/import.json" 2>"$WORK/import.err" || { cat "$WORK/import.err"; fail "import --compdb"; }
python3 - "$WORK/import.json" "$jit" <<'PY' || fail "what import --compdb read"
import json, sys
j, jit = json.load(open(sys.argv[1])), sys.argv[2]
assert j["compiler"].endswith("/g++"), j["compiler"]
assert j["language"] == "CXX" and j["standard"] == "17" and j["baseline"] == "compile", j
assert j["flags"] == ["-DTORCH_EXTENSION_NAME=module_gemm", f"-I{jit}/build/module_gemm/include",
                      "-fPIC", "-std=c++17", "-O3", "--param", "max-inline-insns-single=400",
                      "--param", "inline-unit-growth=30", "-DAITER_LIKE=1", "-fno-math-errno"], j["flags"]
PY
if "$KOPT" import --compdb "$b" --source "$jit/src/missing.cpp" --out "$WORK/x.cmake" 2>"$WORK/missing.err"; then
  fail "an unknown source was imported"
fi
grep -q "missing.cpp: no entry of $b compiles it; did you mean '$jit/src/gemm_instances.cpp'?" "$WORK/missing.err" ||
  { cat "$WORK/missing.err"; fail "the unknown source's message"; }

echo "--- a response file is read in the entry's folder; what the import cannot carry is refused"
printf -- "-O2 '-DFROM_RSP=\"a b\"'\n" >"$b/flags.rsp"
src=$jit/src/gemm_instances.cpp
python3 - "$WORK/cc" "$b" "$src" <<'PY'
import json, os, sys
out, b, src = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
def db(name, directory=b, **command):
    json.dump([{"directory": directory, "file": src, **command}], open(f"{out}/{name}.json", "w"))
db("rsp", arguments=["g++", "@flags.rsp", "-c", src])
db("newline", arguments=["g++", "-DX=1\n2", "-c", src])
db("nul", arguments=["g++", "-DX=1\0", "-c", src])
db("quote", command="g++ -O2 '-DX=1 -c a.cpp")
db("missing_rsp", arguments=["g++", "@nowhere.rsp", "-c", src])
db("no_dir", directory="", arguments=["g++", "-c", src])
PY
"$KOPT" import --json --compdb "$WORK/cc/rsp.json" --source "$src" --out "$WORK/rsp.cmake" \
  >"$WORK/rsp.json" 2>"$WORK/rsp.err" || { cat "$WORK/rsp.err"; fail "import of a response file"; }
python3 - "$WORK/rsp.json" <<'PY' || fail "the response file's flags"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["flags"] == ["-O2", '-DFROM_RSP="a b"'], j["flags"]
PY
for case in "newline:entry 1: argument 2 '-DX=1\n2' holds a line break" \
  "nul:entry 1: argument 2 '-DX=1\0' holds a NUL byte" \
  "quote:entry 1: command: argument 3 '-DX=1 -c a.cpp': its ' quote is never closed" \
  "missing_rsp:entry 1: argument 2 '@nowhere.rsp': the response file $b/nowhere.rsp" \
  "no_dir:entry 1: directory '': expected the absolute folder"; do
  name=${case%%:*}
  if "$KOPT" import --compdb "$WORK/cc/$name.json" --source "$src" --out "$WORK/$name.cmake" \
    2>"$WORK/$name.err"; then
    fail "$name: imported"
  fi
  grep -qF "$WORK/cc/$name.json: ${case#*:}" "$WORK/$name.err" ||
    { cat "$WORK/$name.err"; fail "$name: the message"; }
  [ ! -e "$WORK/$name.cmake" ] || fail "$name: a CMake file was written"
done

echo "--- a host family built with the import: the recorded arguments, in order; correctness"
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$WORK/src/host_gemm"
rm -rf "$WORK/src/host_gemm/candidates/"0[23] "$WORK/src/host_gemm/agent"
mkdir -p "$WORK/consumer"
cat >"$WORK/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES CXX)
find_package(KernelOpt REQUIRED)
enable_testing()
kopt_add_family(host_gemm SPEC $WORK/src/host_gemm/family.json IMPORTED $WORK/jit.cmake)
CMAKE
cb=$WORK/consumer-build
cmake -S "$WORK/consumer" -B "$cb" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF \
  -DCMAKE_CXX_COMPILER="$(command -v g++)" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$WORK/consumer.log" 2>&1 ||
  { cat "$WORK/consumer.log"; fail "configure the consumer"; }
cmake --build "$cb" --target candidate_00 candidate_01 >"$WORK/build.log" 2>&1 ||
  { tail -30 "$WORK/build.log"; fail "build the family"; }
python3 - "$cb" "$jit" <<'PY' || fail "the instance TU line"
import json, shlex, sys
cb, jit = sys.argv[1:3]
entries = [e for e in json.load(open(f"{cb}/compile_commands.json")) if "/instances/" in e["file"] and "/01/" in e["file"]]
assert entries, "no instance TU of 01"
args = shlex.split(entries[0]["command"])
want = ["-DTORCH_EXTENSION_NAME=module_gemm", f"-I{jit}/build/module_gemm/include", "-fPIC", "-std=c++17",
        "-O3", "--param", "max-inline-insns-single=400", "--param", "inline-unit-growth=30",
        "-DAITER_LIKE=1", "-fno-math-errno"]
at = [i for i in range(len(args)) if args[i:i + len(want)] == want]
assert at, f"the recorded arguments are not in the instance TU line, in order: {args}"
assert sum(a == "--param" for a in args) == 2, args
print("ok: the instance TU line holds the JIT build's arguments in order:", " ".join(want))
PY
ctest --test-dir "$cb" -L correctness --output-on-failure >"$WORK/ctest.log" 2>&1 ||
  { cat "$WORK/ctest.log"; fail "ctest -L correctness"; }
grep -qE "candidate_01\.correctness \.+ +Passed" "$WORK/ctest.log" || { cat "$WORK/ctest.log"; fail "01's correctness"; }
echo "PASS"
