#!/usr/bin/env bash
# Builds what a bare GPU node needs for scripts/device-check.sh and packs it into the ignored
# folder .device-bundle/ (at most 64 MiB: the node takes no more with the working tree). The
# node has the NVIDIA driver, CUDA 13 (nvcc, cuBLAS, compute-sanitizer), CMake and ninja, but no
# Debian -dev packages and no network, so it cannot build this project; it runs these binaries.
#
#   scripts/device-bundle.sh [--build-dir DIR] [--out DIR] [--jobs N] [--max-mib N] [--pack-only]
#
# (--pack-only: skip configure and build, pack what DIR already holds.)
# 1. Configures DIR (default build-bundle: Release, CUDA on, MPI and Google Benchmark off) and
#    builds hybridbench, the kernel benchmark hybridbench_cuda_bench and the test binaries the
#    check runs (test_core test_kernels test_baselines test_hybrid, and test_conformance when
#    that target exists): their tests need no source tree at run time.
# 2. Copies them, stripped, to bin/ and every shared library `ldd` says they load to lib/,
#    except what the node itself provides:
#    - glibc (libc, libm, libdl, libpthread, librt, ld-linux): it must match the node's kernel
#      interface and loader; the node's glibc must be at least this machine's (manifest);
#    - the driver (libcuda.so.1);
#    - cuBLAS (libcublas.so.13, libcublasLt.so.13): ~600 MiB, far over the limit; the node's
#      CUDA 13 provides them (ABI-stable within a major version).
#    The CUDA runtime libcudart IS carried: it is what the binaries were linked with (this
#    machine's nvcc version is in the manifest), small, and runs on any CUDA 13 driver.
#    hwloc's PCI plugin goes to lib/hwloc/ (the check points HWLOC_PLUGINS_PATH there, so no
#    plugin is read from the node's /usr/lib).
# 3. Writes MANIFEST (every file: bytes, sha256, where it came from; what the node provides;
#    build facts) and prints the total size; fails if it is over the limit.
set -euo pipefail
CALLER_DIR=$(pwd)
cd "$(dirname "$0")/.."
from_caller() {  # a path given on the command line, relative to where the script was called
  case "$1" in /*) echo "$1" ;; *) echo "$CALLER_DIR/$1" ;; esac
}
BUILD=build-bundle
DEST=.device-bundle
JOBS=2
MAX_MIB=64
PACK_ONLY=0
usage() { sed -n '7p' "$0" | sed 's/^#  */usage: /'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD=$(from_caller "${2:?--build-dir needs a directory}"); shift 2 ;;
    --out) DEST=$(from_caller "${2:?--out needs a directory}"); shift 2 ;;
    --jobs) JOBS="${2:?--jobs needs a number}"; shift 2 ;;
    --max-mib) MAX_MIB="${2:?--max-mib needs a number}"; shift 2 ;;
    --pack-only) PACK_ONLY=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "device-bundle: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
for n in "$JOBS" "$MAX_MIB"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "device-bundle: '$n' is not a positive number" >&2; exit 2; }
done
fail() {
  echo "device-bundle: FAILED: $*" >&2
  exit 1
}
start=$SECONDS

NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$NVCC" ] || fail "nvcc not found: the bundle is CUDA-enabled; install the CUDA toolkit (or put nvcc on PATH)"
CUDA_VERSION=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
[ -n "$CUDA_VERSION" ] || fail "cannot read the CUDA version from '$NVCC --version'"
CUDA_MAJOR=${CUDA_VERSION%%.*}
GENERATOR=()
command -v ninja >/dev/null 2>&1 && GENERATOR=(-G Ninja)

TESTS=(test_core test_kernels test_baselines test_hybrid)
if [ "$PACK_ONLY" = 1 ]; then
  [ -x "$BUILD/tests/test_conformance" ] && TESTS+=(test_conformance)
  TARGETS=(hybridbench hybridbench_cuda_bench "${TESTS[@]}")
  echo "== pack only: the binaries $BUILD already holds"
else
  echo "== configure $BUILD (Release, CUDA $CUDA_VERSION on, MPI off)"
  mkdir -p "$BUILD"
  if ! cmake -S . -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DHYBRIDBENCH_CUDA=ON \
       -DHYBRIDBENCH_MPI=OFF -DHYBRIDBENCH_BENCHMARKS=OFF -DCMAKE_CUDA_COMPILER="$NVCC" \
       >"$BUILD/device-bundle-configure.log" 2>&1; then
    tail -30 "$BUILD/device-bundle-configure.log"
    fail "CMake configure failed (log: $BUILD/device-bundle-configure.log)"
  fi
  if cmake --build "$BUILD" --target help 2>/dev/null | grep -qw test_conformance; then
    TESTS+=(test_conformance)
  fi
  TARGETS=(hybridbench hybridbench_cuda_bench "${TESTS[@]}")
  echo "== build ${TARGETS[*]} (-j$JOBS)"
  if ! cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}" >"$BUILD/device-bundle-build.log" 2>&1; then
    grep -E 'error|Error' "$BUILD/device-bundle-build.log" | head -30
    fail "build failed (log: $BUILD/device-bundle-build.log)"
  fi
  echo "   built in $((SECONDS - start)) s"
fi

binary_path() {  # target -> its file in the build dir
  case "$1" in
    hybridbench) echo "$BUILD/cli/hybridbench" ;;
    hybridbench_cuda_bench) echo "$BUILD/kernels/cuda/hybridbench_cuda_bench" ;;
    *) echo "$BUILD/tests/$1" ;;
  esac
}

# What the node provides; everything else a binary loads travels in lib/.
node_provided() {
  case "$1" in
    linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.*) echo glibc ;;
    libcuda.so.*) echo "NVIDIA driver" ;;
    libcublas.so.* | libcublasLt.so.*) echo "the node's CUDA $CUDA_MAJOR toolkit" ;;
    *) return 1 ;;
  esac
}

echo "== pack $DEST"
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib/hwloc"
declare -A ORIGIN=() NODE=()
copy_lib() {  # path -> lib/ (resolving symlinks; the file keeps the soname ldd asked for)
  local name src
  name=$(basename "$1")
  src=$(readlink -f "$1")
  [ -n "${ORIGIN[lib/$name]:-}" ] && return 0
  cp "$src" "$DEST/lib/$name"
  chmod u+w "$DEST/lib/$name"
  strip --strip-unneeded "$DEST/lib/$name" 2>/dev/null || true
  ORIGIN[lib/$name]="$src"
}
# ldd's "name => path" lines; "not found" fails here rather than on the node.
collect_libs() {
  local line name path provider
  while read -r line; do
    name=$(awk '{print $1}' <<<"$line")
    name=$(basename "$name")
    [ -n "$name" ] || continue
    if provider=$(node_provided "$name"); then
      NODE[$name]="$provider"
      continue
    fi
    case "$line" in
      *"not found"*) fail "$1 needs $name, which is not found on this machine" ;;
    esac
    path=$(awk '$2 == "=>" {print $3}' <<<"$line")
    [ -f "$path" ] || fail "$1: cannot resolve $name (ldd: $line)"
    copy_lib "$path"
  done < <(ldd "$1")
}

for t in "${TARGETS[@]}"; do
  src=$(binary_path "$t")
  [ -x "$src" ] || fail "$src was not built"
  cp "$src" "$DEST/bin/$t"
  strip --strip-unneeded "$DEST/bin/$t"
  ORIGIN[bin/$t]="built: $src"
  collect_libs "$src"
done
# hwloc loads its PCI plugin at run time (not in ldd): carry it and what it loads.
# (awk and sed read to the end: a reader that quits early SIGPIPEs the writer, and pipefail
# turns that into this script's exit 141.)
HWLOC_LIB=$(ldconfig -p | awk '/libhwloc.so.15 .*x86-64/ && !found {print $NF; found = 1}')
PLUGIN_DIR=$(dirname "$(readlink -f "${HWLOC_LIB:-/usr/lib/x86_64-linux-gnu/libhwloc.so.15}")")/hwloc
if [ -f "$PLUGIN_DIR/hwloc_pci.so" ]; then
  cp "$PLUGIN_DIR/hwloc_pci.so" "$DEST/lib/hwloc/"
  strip --strip-unneeded "$DEST/lib/hwloc/hwloc_pci.so" 2>/dev/null || true
  ORIGIN[lib/hwloc/hwloc_pci.so]="$PLUGIN_DIR/hwloc_pci.so"
  collect_libs "$PLUGIN_DIR/hwloc_pci.so"
fi

GLIBC=$(ldd --version | awk 'NR == 1 {print $NF}')
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
DIRTY=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
{
  echo "# hybridbench device bundle: built $(date -u +%FT%TZ) by scripts/device-bundle.sh"
  echo "commit $COMMIT$DIRTY"
  echo "cuda $CUDA_VERSION (nvcc of the build machine; libcudart carried; CUDA ${CUDA_MAJOR}.x on the node)"
  echo "glibc $GLIBC (the node's must be this or newer)"
  echo "arch $(grep -oE 'code=\[?(sm|compute)_[0-9]+[a-z]?' "$BUILD/compile_commands.json" 2>/dev/null |
    sed 's/code=\[*//' | sort -u | tr '\n' ' ')(the GPU code nvcc generated: SASS sm_*, PTX compute_*)"
  echo "tests ${TESTS[*]}"
  for n in $(printf '%s\n' "${!NODE[@]}" | sort); do echo "node $n ${NODE[$n]}"; done
  echo "# bytes sha256 path origin"
  (cd "$DEST" && find bin lib -type f | sort) | while read -r f; do
    echo "file $(stat -c %s "$DEST/$f") $(sha256sum "$DEST/$f" | awk '{print $1}') $f ${ORIGIN[$f]}"
  done
} >"$DEST/MANIFEST"

total=$(du -sb "$DEST" | awk '{print $1}')
limit=$((MAX_MIB * 1024 * 1024))
echo "== $DEST: $(find "$DEST" -type f | wc -l) files, $total bytes ($((total / 1024 / 1024)) MiB of $MAX_MIB MiB)"
awk '$1 == "file" {printf "   %10d  %s\n", $2, $4}' "$DEST/MANIFEST"
awk '$1 == "node" {printf "   from the node: %s (%s)\n", $2, substr($0, index($0, $3))}' "$DEST/MANIFEST"
[ "$total" -le "$limit" ] || fail "the bundle is $total bytes, over the $MAX_MIB MiB limit"
echo "device-bundle: OK in $((SECONDS - start)) s"
