# Shared compile cache: two build folders with separate, empty local ccache folders share one
# Redis (ccache remote_storage through KOPT_CCACHE_REMOTE); the second build's compiles are all
# remote hits. A Redis that refuses (needs a password) or is down costs a warning, not the build.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need ccache
need redis-server
need redis-cli
ccache --show-config 2>/dev/null | grep "remote_storage" >/dev/null || skip "ccache has no remote_storage (4.4+)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_pids=()
stop_redis() { for pid in "${redis_pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap 'rc=$?; stop_redis; (exit $rc); cleanup' EXIT
# start_redis <port> [redis-server options...]: a throwaway server on loopback, no persistence.
start_redis() {
  local port=$1
  shift
  mkdir -p "$WORK/redis-$port"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$WORK/redis-$port" "$@" >"$WORK/redis-$port.log" 2>&1 &
  redis_pids+=($!)
  for _ in $(seq 50); do
    redis-cli -p "$port" ping 2>/dev/null | grep -Eq "PONG|NOAUTH" && return 0
    sleep 0.1
  done
  cat "$WORK/redis-$port.log"
  fail "redis-server on port $port did not start"
}
stat() { awk -v k="$1" '$1==k{print $2}' "$2"; }

family_src=$WORK/src/host_gemm
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
# build_with <folder> <remote_storage>: configure and build candidate 01 with an empty ccache of
# the folder's own; leaves ninja's output in <folder>.log and ccache's counters in <folder>.stats.
build_with() {
  local b=$1 remote=$2
  export CCACHE_DIR=$b.ccache
  cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release -DKOPT_CCACHE_REMOTE="$remote" >"$b.configure.log" 2>&1 ||
    { cat "$b.configure.log"; fail "configure $b"; }
  ninja -C "$b" candidate_01 >"$b.log" 2>&1 || { cat "$b.log"; fail "a build with $remote failed"; }
  ccache --print-stats >"$b.stats"
}

port=$(free_port)
start_redis "$port"
url=redis://127.0.0.1:$port

echo "--- first build folder: compiles, and fills the shared cache"
build_with "$WORK/b1" "$url"
compiles=$(grep -c "Building CXX object" "$WORK/b1.log")
[ "$compiles" -gt 0 ] || fail "b1 compiled nothing"
[ "$(stat cache_miss "$WORK/b1.stats")" -eq "$compiles" ] || { cat "$WORK/b1.stats"; fail "b1 misses"; }
[ "$(stat remote_storage_write "$WORK/b1.stats")" -gt 0 ] ||
  { cat "$WORK/b1.stats"; fail "b1 wrote nothing to Redis"; }
grep -q "kopt: warning" "$WORK/b1.log" && { cat "$WORK/b1.log"; fail "warning with a working Redis"; }

echo "--- second build folder, empty local cache: every compile is a remote hit"
build_with "$WORK/b2" "$url"
[ "$(grep -c "Building CXX object" "$WORK/b2.log")" -eq "$compiles" ] || fail "b2 built other TUs"
[ "$(stat cache_miss "$WORK/b2.stats")" -eq 0 ] || { cat "$WORK/b2.stats"; fail "misses in b2"; }
[ "$(stat remote_storage_hit "$WORK/b2.stats")" -eq "$compiles" ] ||
  { cat "$WORK/b2.stats"; fail "b2: expected $compiles remote hits"; }
[ "$(stat local_storage_hit "$WORK/b2.stats")" -eq 0 ] || fail "b2's local cache was not empty"
[ -x "$WORK/b2/kopt/host_gemm/bin/candidate_01" ] || fail "b2 has no candidate_01 binary"

echo "--- a Redis that refuses (it needs a password): warning, compiled locally"
port2=$(free_port)
start_redis "$port2" --requirepass not-given
build_with "$WORK/b3" "redis://127.0.0.1:$port2"
grep -q "kopt: warning: ccache remote storage unreachable.*NOAUTH" "$WORK/b3.log" ||
  { cat "$WORK/b3.log"; fail "no warning naming the refusal"; }
[ "$(stat cache_miss "$WORK/b3.stats")" -eq "$compiles" ] || { cat "$WORK/b3.stats"; fail "b3"; }

echo "--- a Redis that is down: warning, compiled locally"
stop_redis
redis_pids=()
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 || break; sleep 0.1; done
build_with "$WORK/b4" "$url"
grep -q "kopt: warning: ccache remote storage unreachable.*: redis://127.0.0.1:$port: Connection refused" \
  "$WORK/b4.log" || { cat "$WORK/b4.log"; fail "no warning naming the refused connection"; }
[ "$(stat cache_miss "$WORK/b4.stats")" -eq "$compiles" ] || { cat "$WORK/b4.stats"; fail "b4"; }
[ "$(stat remote_storage_error "$WORK/b4.stats")" -eq 0 ] ||
  fail "ccache still tried the dead Redis (the launcher should have dropped it)"
echo "PASS"
