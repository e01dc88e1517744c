#!/usr/bin/env bash
# One command from a fresh Debian machine to a full test run: installs what is missing,
# builds (CUDA backend too when nvcc exists; GPU tests skip without a GPU), runs every test;
# then the unit tests again under AddressSanitizer + UBSan (scripts/sanitize.sh, ./build-asan)
# and each fuzz target for 25 s (scripts/fuzz.sh, ./build-fuzz). Extra arguments go to the
# main build's CMake configure only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# install-deps.sh installed the report schema's validator: its absence is a failure, not a skip.
export HB_REQUIRE_JSONSCHEMA=1
scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
scripts/sanitize.sh
scripts/fuzz.sh
