#!/usr/bin/env bash
# The tree stays in the one style .clang-format describes (issue 20 applied it once), so a diff
# shows only real changes. clang-format's output differs between major versions, so the check
# uses the version the tree was formatted with and skips (77) where it is not installed.
# Fails listing each file that is not formatted, and the command that fixes it.
set -euo pipefail
cd "$1"
formatter=clang-format-14
if ! command -v "$formatter" >/dev/null; then
  echo "SKIP: $formatter not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "SKIP: $1 is not a git work tree (a source tarball); nothing to check"
  exit 77
fi
# One formatter process for the whole tree (a process per file takes a minute on a busy
# 2-core machine); its diagnostics name each unformatted file.
mapfile -d '' files < <(git ls-files -z --cached --others --exclude-standard -- \
                          '*.cpp' '*.h' '*.cu' '*.cuh' ':!:*/fixtures/*')
present=()
for f in "${files[@]}"; do [ -f "$f" ] && present+=("$f"); done  # skip deletions not yet committed
mapfile -t bad < <("$formatter" --dry-run -Werror "${present[@]}" 2>&1 |
                   sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' |
                   sort -u)
if ((${#bad[@]})); then
  echo "FAIL: ${#bad[@]} file(s) are not formatted with .clang-format:"
  printf '  %s\n' "${bad[@]}"
  echo "Fix: $formatter -i ${bad[*]}"
  exit 1
fi
echo "OK: every C++/CUDA file is formatted"
