# The size check: no source file of kopt (src/, harness/) over 700 lines and no function over 80,
# so that each file holds one idea and each function reads on one screen. Functions are found by
# Universal Ctags (their first and last lines). Skips without it.
set -euo pipefail
command -v ctags >/dev/null 2>&1 && ctags --version 2>/dev/null | grep -q "Universal Ctags" ||
  { echo "SKIP: Universal Ctags is not installed"; exit 77; }
cd "$KOPT_SOURCE_DIR"
files=$(git ls-files 'src/*.cpp' 'src/*.hpp' 'src/*.h' 'harness/*.hpp' 'harness/*.cpp' \
  'harness/*.h' 2>/dev/null || true)
[ -n "$files" ] || { echo "SKIP: not a git checkout"; exit 77; }
# shellcheck disable=SC2086
long_files=$(wc -l $files | awk '$2 != "total" && $1 > 700 { print "  " $2 ": " $1 " lines" }')
# shellcheck disable=SC2086
long_functions=$(ctags -x --_xformat='%{line} %{end} %N %F' --kinds-c++=f --fields=+e \
  --languages=C++ --language-force=C++ $files |
  awk '$2 - $1 + 1 > 80 { print "  " $4 ":" $1 ": " $3 ", " $2 - $1 + 1 " lines" }')
if [ -n "$long_files" ] || [ -n "$long_functions" ]; then
  [ -z "$long_files" ] || printf 'FAIL: files over 700 lines:\n%s\n' "$long_files"
  [ -z "$long_functions" ] || printf 'FAIL: functions over 80 lines:\n%s\n' "$long_functions"
  exit 1
fi
echo "PASS: $(echo "$files" | wc -w) files, none over 700 lines, no function over 80"
