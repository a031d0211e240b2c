# A project that sets no build type (the README's snippet alone): the family's candidates still
# compile optimised (-O3, as in Release), configure says so, and a build type given is left alone.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja

cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$WORK/f"
sed -i '/^if(NOT CMAKE_BUILD_TYPE)$/,/^endif()$/d' "$WORK/f/CMakeLists.txt"
! grep -q CMAKE_BUILD_TYPE "$WORK/f/CMakeLists.txt" || fail "the copy still sets a build type"
compile_line() { # the compile command of candidate 00's first instance in build folder $1
  # Through a file: grep -m1 reading ninja's pipe would end it with SIGPIPE (pipefail).
  ninja -C "$1" -t commands candidate_00 >"$WORK/commands.txt"
  grep -m1 '/instances/' "$WORK/commands.txt"
}

echo "--- no build type: -O3, and configure says so"
cmake -S "$WORK/f" -B "$WORK/none" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DKOPT_USE_CCACHE=OFF >"$WORK/none.log" 2>&1 || { cat "$WORK/none.log"; fail "configure"; }
grep -q "kopt: host_gemm: CMAKE_BUILD_TYPE is not set, so the family's candidates compile with -O3" \
  "$WORK/none.log" || { cat "$WORK/none.log"; fail "configure does not say how it compiles"; }
line=$(compile_line "$WORK/none")
[[ "$line" == *" -O3 "* ]] || { echo "$line"; fail "no -O3"; }

echo "--- a build type given: its flags alone, and no notice"
cmake -S "$WORK/f" -B "$WORK/debug" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DKOPT_USE_CCACHE=OFF -DCMAKE_BUILD_TYPE=Debug >"$WORK/debug.log" 2>&1 ||
  { cat "$WORK/debug.log"; fail "configure Debug"; }
! grep -q "CMAKE_BUILD_TYPE is not set" "$WORK/debug.log" || fail "a notice with a build type"
line=$(compile_line "$WORK/debug")
[[ "$line" == *" -g "* ]] || { echo "$line"; fail "Debug's -g missing"; }
[[ "$line" != *"-O3"* ]] || { echo "$line"; fail "-O3 added to a Debug build"; }
