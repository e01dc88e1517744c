#!/usr/bin/env bash
# The GPU check in one call: on a machine with an NVIDIA GPU (Hopper or newer for this build),
# configure and build only what the check needs (Release, -j16), run the GPU tests with
# HB_REQUIRE_GPU=1 (a skip counts as a failure here), then print the figure table of
# hybridbench_cuda_bench: HBM copy bandwidth, decode attention bandwidth at the Llama-3.1-8B
# shape (8K/32K/128K tokens, batch 1/16) as % of that copy bandwidth, LSE merge time, pinned
# H2D/D2H bandwidth. Budget: under 8 minutes on an H200, build included.
#
#   scripts/device-check.sh [build-dir]     (default build-device)
#
# Exits non-zero with the reason on a machine without a GPU, when the build fails, or when a
# GPU test fails (the figures are still printed in that last case).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build-device}"
start=$SECONDS
fail() {
  echo "device-check: FAILED: $*" >&2
  exit 1
}

command -v nvidia-smi >/dev/null 2>&1 || fail "nvidia-smi not found: no NVIDIA driver on this machine, so no GPU to check"
gpus=$(nvidia-smi -L 2>&1) || fail "nvidia-smi sees no GPU: ${gpus}"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$NVCC" ] || fail "nvcc not found: install the CUDA toolkit (or put nvcc on PATH)"
echo "== GPU"
echo "$gpus"

echo "== configure + build ($BUILD: Release, CUDA on, targets test_kernels and hybridbench_cuda_bench)"
mkdir -p "$BUILD"
if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHYBRIDBENCH_CUDA=ON -DHYBRIDBENCH_BENCHMARKS=OFF \
     -DCMAKE_CUDA_COMPILER="$NVCC" >"$BUILD/device-check-configure.log" 2>&1; then
  tail -30 "$BUILD/device-check-configure.log"
  fail "CMake configure failed (log: $BUILD/device-check-configure.log)"
fi
if ! cmake --build "$BUILD" -j16 --target test_kernels hybridbench_cuda_bench >"$BUILD/device-check-build.log" 2>&1; then
  grep -E 'error|Error' "$BUILD/device-check-build.log" | head -30
  fail "build failed (log: $BUILD/device-check-build.log)"
fi
echo "   built in $((SECONDS - start)) s"

BENCH="$BUILD/kernels/cuda/hybridbench_cuda_bench"
"$BENCH" --probe || fail "the GPU is visible to nvidia-smi but not usable by this build (see above)"

echo "== GPU tests (HB_REQUIRE_GPU=1: skipping is failing)"
tests_ok=1
HB_REQUIRE_GPU=1 "$BUILD/tests/test_kernels" --gtest_filter='Cuda*:*/Cuda*' --gtest_brief=1 || tests_ok=0

echo "== figures"
"$BENCH" || fail "hybridbench_cuda_bench failed"

echo "== done in $((SECONDS - start)) s"
[ "$tests_ok" = 1 ] || fail "GPU tests failed (figures above are from kernels that did not pass their tests)"
echo "device-check: OK"
