#!/usr/bin/env bash
# CTest fixture of a CUDA-enabled build tree: the guests have no CUDA libraries, so the VM tests
# need a CPU-only hybridbench. Configures SRC into BUILD with CUDA, tests and benchmarks off and
# builds only the hybridbench target. Builds nothing (exit 0) where no QEMU could boot it
# anyway: the VM tests then skip with the reason.
#   build_cpu_binary.sh SRC BUILD
set -euo pipefail
src=$1 build=$2
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
  echo "vm: qemu-system-x86_64 not found; no CPU-only hybridbench built (the VM tests will skip)"
  exit 0
fi
cmake -S "$src" -B "$build" -DHYBRIDBENCH_CUDA=OFF -DHYBRIDBENCH_TESTS=OFF -DHYBRIDBENCH_BENCHMARKS=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 || { tail -30 "$build.configure.log"; exit 1; }
cmake --build "$build" --target hybridbench -j "$(nproc)"
