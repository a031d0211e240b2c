# The format check: every C++ source of kopt (src/, harness/, tests/unit/, tests/fuzz/, bench/) is as
# clang-format (.clang-format at the root) would write it. Skips without clang-format.
set -euo pipefail
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format is not installed"; exit 77; }
cd "$KOPT_SOURCE_DIR"
files=$(git ls-files 'src/*.cpp' 'src/*.hpp' 'src/*.h' 'harness/*.hpp' 'harness/*.cpp' \
  'tests/unit/*.cpp' 'tests/unit/*.hpp' 'tests/fuzz/*.cpp' 'tests/fuzz/*.hpp' 'bench/*.cpp' 2>/dev/null || true)
[ -n "$files" ] || { echo "SKIP: not a git checkout"; exit 77; }
clang-format --dry-run --Werror $files
echo "PASS: $(echo "$files" | wc -w) files formatted"
