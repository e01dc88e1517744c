#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz: safetensors traces, report JSON, sweep journals, platform
# profiles, --seq-len and CPU lists, hwloc XML), built with clang-14 into ./build-fuzz
# (HYBRIDBENCH_FUZZ=ON: coverage + ASan + UBSan) and each run for a bounded time (25 s;
# -DHB_FUZZ_SECONDS=N changes it) from its seed corpus. A crash, sanitizer report, leak, an input
# over 10 s or a process over 512 MB fails its CTest case, and so this script.
# scripts/test.sh runs it last. Extra arguments go to CMake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DHYBRIDBENCH_CUDA=OFF -DHYBRIDBENCH_MPI=OFF -DHYBRIDBENCH_FUZZ=ON "$@" >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target hb_fuzz_all
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-fuzz --output-on-failure -j "$(nproc)" -L fuzz
