# kopt import against real CMake trees made here: a multi-directory tree with a shared library
# of kernels built from generated sources, per-source compile options, an include folder outside
# the source tree and (when nvcc is installed) a CUDA target; under Ninja and Ninja
# Multi-Config. The imported flags must equal the tree's compile_commands.json; a family built
# with IMPORTED measures baseline 00 from the tree's library with no baseline compile.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

tree=$WORK/tree
ext=$WORK/ext/include # outside the source tree
mkdir -p "$tree/common" "$tree/kernels" "$tree/cuda" "$ext"
cp "$KOPT_SOURCE_DIR/examples/host_gemm/gemm_kernel.hpp" "$ext/"
has_cuda=0
if command -v nvcc >/dev/null 2>&1; then has_cuda=1; fi

cat >"$tree/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(tree LANGUAGES CXX)
option(WITH_CUDA "" OFF)
add_subdirectory(common)
add_subdirectory(kernels)
if(WITH_CUDA)
  enable_language(CUDA)
  add_subdirectory(cuda)
endif()
CMAKE
cat >"$tree/common/CMakeLists.txt" <<'CMAKE'
add_library(common INTERFACE)
target_compile_definitions(common INTERFACE COMMON_LEVEL=2 "COMMON_NAME=\"a b\"")
target_include_directories(common SYSTEM INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/sys)
CMAKE
# The kernel library compiles host_gemm's ten instances from sources generated at build time.
cat >"$tree/kernels/CMakeLists.txt" <<CMAKE
set(sources extra.cpp)
foreach(shape 16x16x16 16x64x32 16x64x64 32x32x32 32x32x64 32x64x32 32x64x64 64x32x64 64x64x32 64x64x64)
  string(REPLACE "x" ";" tiles \${shape})
  list(JOIN tiles ", " tiles)
  set(out \${CMAKE_CURRENT_BINARY_DIR}/gen/gemm_\${shape}.cpp)
  add_custom_command(OUTPUT \${out}
    COMMAND \${CMAKE_COMMAND} -DOUT=\${out} -DSHAPE=\${shape} "-DTILES=\${tiles}"
            -P \${CMAKE_CURRENT_SOURCE_DIR}/instance.cmake
    DEPENDS instance.cmake)
  list(APPEND sources \${out})
endforeach()
add_library(kernels SHARED \${sources})
target_link_libraries(kernels PRIVATE common)
target_include_directories(kernels PRIVATE $ext)
target_compile_definitions(kernels PRIVATE KERNELS_TREE=1)
target_compile_options(kernels PRIVATE -fno-math-errno -Wall)
target_compile_features(kernels PRIVATE cxx_std_17)
set_source_files_properties(extra.cpp PROPERTIES COMPILE_OPTIONS "-fno-tree-vectorize;-DEXTRA_ONLY")
CMAKE
cat >"$tree/kernels/instance.cmake" <<'CMAKE'
file(WRITE ${OUT} "#include \"gemm_kernel.hpp\"\nvoid kopt_instance_gemm_${SHAPE}(const GemmArgs& a) { gemm_tiled<${TILES}>(a); }\n")
CMAKE
echo 'int kernels_extra() { return KERNELS_TREE + COMMON_LEVEL; }' >"$tree/kernels/extra.cpp"
cat >"$tree/cuda/CMakeLists.txt" <<'CMAKE'
add_library(cuda_kernels STATIC k.cu host.cpp)
target_compile_options(cuda_kernels PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math -lineinfo>)
target_compile_features(cuda_kernels PRIVATE cuda_std_17)
set_target_properties(cuda_kernels PROPERTIES CUDA_ARCHITECTURES 90)
CMAKE
echo '__global__ void k(float* x) { x[0] = 1; }' >"$tree/cuda/k.cu"
echo 'int host() { return 0; }' >"$tree/cuda/host.cpp"

# Compares kopt import --json for one source with that source's compile_commands.json entry.
check_flags() { # build_dir config source
  local b=$1 config=$2 src=$3
  "$KOPT" import --json --build-dir "$b" --source "$src" ${config:+--config "$config"} \
    --out "$WORK/imported.cmake" >"$WORK/import.json" || fail "import $src from $b"
  python3 - "$b/compile_commands.json" "$WORK/import.json" "$src" "$config" <<'PY' || fail "flags of $src ($b $config)"
import json, os, shlex, sys
entries, imp, src, config = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
def output(e):  # cmake 3.25 writes no "output" field: take -o's argument
    a = shlex.split(e["command"]); return a[a.index("-o") + 1]
cands = [e for e in entries if os.path.realpath(e["file"]) == os.path.realpath(src)
         and (not config or f"/{config}/" in output(e))]
assert len(cands) == 1, f"{len(cands)} compile_commands entries for {src}"
args = shlex.split(cands[0]["command"])
assert os.path.realpath(args[0]) == os.path.realpath(imp["compiler"]), (args[0], imp["compiler"])
rest, i = [], 1
while i < len(args):
    a = args[i]
    if a in ("-o", "-c", "-x"): i += 2; continue
    if a == "-forward-unknown-to-host-compiler": i += 1; continue
    if a.startswith("-isystem="): rest += ["-isystem", a[len("-isystem="):]]
    else: rest.append(a)
    i += 1
mine = ["-D" + d for d in imp["defines"]]
for inc in imp["includes"]:
    mine += ["-isystem", inc["path"]] if inc["system"] else ["-I" + inc["path"]]
mine += imp["flags"]
std = [a for a in rest if a.startswith("-std=")]
assert all(s.endswith("++" + imp["standard"]) for s in std), (std, imp["standard"])
strip = lambda l: [a for a in l if not a.startswith("-std=")]
if strip(rest) != strip(mine):
    print("compile_commands:", strip(rest)); print("kopt import:     ", strip(mine)); sys.exit(1)
print(f"ok {os.path.basename(src)} {imp['language']} {config or 'single'}: {len(mine)} args")
PY
}

echo "--- Ninja and Ninja Multi-Config trees: imported flags == compile_commands.json"
for gen in "Ninja" "Ninja Multi-Config"; do
  b=$WORK/tree-build-${gen// /-}
  cmake -S "$tree" -B "$b" -G "$gen" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DWITH_CUDA=$has_cuda >"$WORK/tree-configure.log" 2>&1 || { cat "$WORK/tree-configure.log"; fail "configure $gen"; }
  configs=""
  [ "$gen" = "Ninja" ] || configs="Debug Release"
  for config in ${configs:-""}; do
    kdir=$b/kernels/gen
    check_flags "$b" "$config" "$kdir/gemm_32x32x32.cpp" # a generated source
    check_flags "$b" "$config" "$tree/kernels/extra.cpp"  # per-source compile options
    if [ $has_cuda = 1 ]; then
      check_flags "$b" "$config" "$tree/cuda/k.cu"
      check_flags "$b" "$config" "$tree/cuda/host.cpp"
    fi
  done
done
[ $has_cuda = 1 ] || echo "nvcc is not installed: the CUDA part was skipped"

echo "--- bad input: not a build tree, an unknown target, an error reply"
if "$KOPT" import --build-dir "$tree" --target kernels --out "$WORK/x.cmake" 2>"$WORK/err.log"; then
  fail "import from a source folder succeeded"
fi
grep -q "$tree: not a CMake build tree (no CMakeCache.txt)" "$WORK/err.log" || { cat "$WORK/err.log"; fail "not-a-tree message"; }
b=$WORK/tree-build-Ninja
if "$KOPT" import --build-dir "$b" --target kernel --out "$WORK/x.cmake" 2>"$WORK/err.log"; then
  fail "import of an unknown target succeeded"
fi
grep -q "no target 'kernel'.*did you mean 'kernels'?" "$WORK/err.log" || { cat "$WORK/err.log"; fail "no suggestion"; }
# A query cmake cannot answer: the real cmake writes an error reply, kopt says so.
q=$b/.cmake/api/v1/query/client-kopt/query.json
echo '{"requests": 3}' >"$q"
cmake "$b" >/dev/null
python3 - "$b" <<'PY' || fail "error reply"
import glob, json, subprocess, sys, os
b = sys.argv[1]
index = sorted(glob.glob(f"{b}/.cmake/api/v1/reply/index-*.json"))[-1]
assert "error" in json.load(open(index))["reply"]["client-kopt"]["query.json"]["responses"], "cmake wrote no error"
PY
# kopt rewrites its own query over the bad one, and cmake answers it again.
"$KOPT" import --build-dir "$b" --source "$b/kernels/gen/gemm_16x16x16.cpp" --out "$WORK/kernels.cmake" >/dev/null ||
  fail "re-import after an error reply"

echo "--- build the tree, then a family whose baseline is the tree's library"
cmake --build "$b" --target kernels >"$WORK/tree-build.log" 2>&1 || { cat "$WORK/tree-build.log"; fail "tree build"; }
"$KOPT" import --build-dir "$b" --source "$b/kernels/gen/gemm_32x32x32.cpp" \
  --out "$WORK/kernels.cmake" >/dev/null || fail "import kernels"
grep -q "KOPT_IMPORTED_ARTIFACT \"$b/kernels/libkernels.so\"" "$WORK/kernels.cmake" || fail "no artifact"
fam=$WORK/family
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$fam"
rm -rf "$fam/candidates/02" "$fam/candidates/03"
sed -i "s|kopt_add_family(host_gemm SPEC \(.*\)/family.json)|kopt_add_family(host_gemm SPEC \1/family.json IMPORTED $WORK/kernels.cmake)|" \
  "$fam/CMakeLists.txt"
grep -q IMPORTED "$fam/CMakeLists.txt" || fail "could not edit the example's CMakeLists.txt"
fb=$WORK/family-build
cmake -S "$fam" -B "$fb" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$WORK/family-configure.log" 2>&1 ||
  { cat "$WORK/family-configure.log"; fail "configure the family with IMPORTED"; }
cmake --build "$fb" --target candidate_00 -- -v >"$WORK/build00.log" 2>&1 || { cat "$WORK/build00.log"; fail "build 00"; }
if grep -E "(c\+\+|g\+\+|nvcc).* -c .*/(instances/[^ ]*|kernels/[^ ]*)\.cpp" "$WORK/build00.log"; then
  fail "baseline 00 compiled a kernel instance"
fi
grep -q "libkernels.so" "$WORK/build00.log" || fail "00 does not link the tree's library"
compiles00=$(grep -cE " -c [^ ]*/instances/" "$WORK/build00.log" || true)
[ "$compiles00" = 0 ] || fail "$compiles00 baseline instance compiles"
# What 00 does compile is kopt's measuring glue and nothing of the baseline: the family's
# harness, the registry and the dispatch (DESIGN.md: the harness binary carries 00's hash).
glue00=$(grep -oE " -c [^ ]+" "$WORK/build00.log" | sed 's|.*/||' | sort | tr '\n' ' ')
[ "$glue00" = "harness.cpp kopt_dispatch.cpp kopt_registry.cpp " ] ||
  fail "00 compiled '$glue00', expected only kopt's glue (harness.cpp kopt_dispatch.cpp kopt_registry.cpp)"
if grep -oE " -c [^ ]+" "$WORK/build00.log" | grep "$tree/" >/dev/null; then
  fail "00 compiled a source of the tree"
fi
ldd "$fb/kopt/host_gemm/bin/candidate_00" | grep "$b/kernels/libkernels.so" >/dev/null || fail "00 does not load the tree's libkernels.so"
cmake --build "$fb" --target candidate_01 -- -v >"$WORK/build01.log" 2>&1 || { cat "$WORK/build01.log"; fail "build 01"; }
line=$(grep -E " -c [^ ]*/instances/gemm_32x32x32.cpp" "$WORK/build01.log") || fail "01 compiled no instance"
for flag in -DKERNELS_TREE=1 -DCOMMON_LEVEL=2 -fno-math-errno -Wall "-I$ext" -fPIC "-isystem $tree/common/sys"; do
  [[ "$line" == *" $flag"* ]] || { echo "$line"; fail "01's instance compile lacks the tree's $flag"; }
done
# The family's application links the same instance objects: no instance compiled again.
cmake --build "$fb" --target candidate_01_application candidate_00_application -- -v \
  >"$WORK/app.log" 2>&1 || { cat "$WORK/app.log"; fail "build the applications of 00 and 01"; }
! grep -qE " -c [^ ]*/instances/" "$WORK/app.log" || fail "an application compiled an instance again"
ldd "$fb/kopt/host_gemm/bin/app/candidate_00" | grep "$b/kernels/libkernels.so" >/dev/null ||
  fail "00's application does not load the tree's libkernels.so"
"$fb/kopt/host_gemm/bin/app/candidate_01" --steps 1 --prefill 0 | grep -q '^kopt-app-us: ' ||
  fail "01's application printed no time"
"$KOPT" bench --spec "$fam/family.json" --state-dir "$fb/kopt/host_gemm" --candidate 00 >"$WORK/bench00.log" 2>&1 ||
  { cat "$WORK/bench00.log"; fail "bench 00"; }
ctest --test-dir "$fb" -R '^candidate_0[01]\.correctness$' --output-on-failure >"$WORK/correct.log" 2>&1 ||
  { cat "$WORK/correct.log"; fail "correctness of 00 (tree library) and 01"; }
echo "ok: baseline from $b/kernels/libkernels.so with $compiles00 instance compiles (compiled: $glue00)"
