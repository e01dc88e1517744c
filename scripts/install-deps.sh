#!/usr/bin/env bash
# Installs whatever hybridbench needs that this Debian machine lacks (nothing when all is there).
# The CUDA toolkit is not installed here: with nvcc at /usr/local/cuda the build compiles the
# CUDA backend, without it the build is CPU-only (HYBRIDBENCH_CUDA=AUTO).
set -euo pipefail
# `--main`: only what building and running the main job needs (scripts/quickstart.sh); without
# it, also what the whole test suite needs (scripts/test.sh): the VM guests, MPI, the sanitizer
# and fuzz compilers, the formatter, the report schema validator, a headless browser.
main_only=0
if [ "${1:-}" = "--main" ]; then main_only=1; shift; fi
packages=(build-essential cmake pkg-config git ccache libhwloc-dev hwloc-nox libnuma-dev numactl
          libcli11-dev nlohmann-json3-dev libbenchmark-dev libgtest-dev)
# For the VM tests (tests/vm): QEMU, a Debian kernel and busybox make the guests; ndctl/daxctl
# (ndctl ships cxl) turn the emulated CXL device into a NUMA node there.
test_packages=(qemu-system-x86 busybox-static linux-image-amd64 ndctl daxctl
          libopenmpi-dev openmpi-bin  # MPI: fleet runs (run --distribute) and their tests
          clang-14 libclang-rt-14-dev llvm-14  # sanitizer + libFuzzer builds (scripts/sanitize.sh, fuzz.sh); llvm-symbolizer
          clang-format-14  # the one code style (.clang-format), checked by CTest repo_format
          python3-jsonschema  # reports validated against reports/schema/ (CTest schema_reports)
          chromium  # headless: the HTML report's browser test (CTest label browser, tests/browser)
          python3-torch)  # scripts/capture-trace.py's test (tests/trace): a Llama-style layer
((main_only)) || packages+=("${test_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "install-deps: all Debian packages present" >&2
fi
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: CUDA toolkit found; the CUDA backend will be compiled" >&2
else
  echo "install-deps: no CUDA toolkit (nvcc) found; building the CPU-only binary" >&2
fi
