#!/usr/bin/env bash
# The test suite is the project's own: a user's clone has nothing beside it, so no tracked file
# under tests/, scripts/ or a CMakeLists.txt may name the developers' sibling folder of design
# notes. Fails listing each offending line.
set -euo pipefail
cd "$1"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "SKIP: $1 is not a git work tree (a source tarball); nothing to check"
  exit 77
fi
# The pattern is assembled so this file does not match itself.
pattern='\.\.''/shared'
if hits=$(git grep -nE "$pattern" -- tests scripts CMakeLists.txt '*/CMakeLists.txt' '*.cmake'); then
  echo "FAIL: tracked files name the sibling folder that a user's clone does not have:"
  echo "$hits"
  echo "Copy the data into the repository (e.g. tests/memtier/fixtures/) and point at it there."
  exit 1
fi
echo "OK: no tracked test, script or CMake file names it"
