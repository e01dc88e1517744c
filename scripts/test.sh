#!/usr/bin/env bash
# One command from a fresh Debian machine to a full test run: installs what is missing,
# builds (CUDA backend too when nvcc exists; GPU tests skip without a GPU), runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
