# kopt as a package: installed and found with find_package(KernelOpt), and pulled in with
# add_subdirectory (which builds the kopt tool once at configure time); both build and check a
# candidate of the host example.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$WORK/host_gemm"

echo "--- find_package after cmake --install"
cmake --install "$KOPT_PACKAGE_DIR" --prefix "$WORK/prefix" >/dev/null
[ -x "$WORK/prefix/bin/kopt" ] || fail "kopt not installed"
cmake -S "$WORK/host_gemm" -B "$WORK/installed" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DKOPT_USE_CCACHE=OFF >"$WORK/installed.log" 2>&1 || { cat "$WORK/installed.log"; fail "configure"; }
grep -q "$WORK/prefix/bin/kopt bench" "$WORK/installed/build.ninja" || fail "not the installed kopt"
ctest --test-dir "$WORK/installed" -R '^candidate_00\.correctness$' --output-on-failure \
  >"$WORK/installed-test.log" 2>&1 || { cat "$WORK/installed-test.log"; fail "installed: 00 correctness"; }

echo "--- add_subdirectory"
mkdir -p "$WORK/parent"
cat >"$WORK/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(parent LANGUAGES CXX)
set(KOPT_BUILD_TESTS OFF CACHE BOOL "")
add_subdirectory("$KOPT_SOURCE_DIR" kopt)
include("$KOPT_SOURCE_DIR/cmake/KernelOpt.cmake")
enable_testing()
kopt_add_family(host_gemm SPEC "$WORK/host_gemm/family.json")
CMAKE
cmake -S "$WORK/parent" -B "$WORK/sub" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  >"$WORK/sub.log" 2>&1 || { cat "$WORK/sub.log"; fail "configure with add_subdirectory"; }
ctest --test-dir "$WORK/sub" -R '^candidate_01\.correctness$' --output-on-failure \
  >"$WORK/sub-test.log" 2>&1 || { cat "$WORK/sub-test.log"; fail "add_subdirectory: 01 correctness"; }
echo "PASS"
