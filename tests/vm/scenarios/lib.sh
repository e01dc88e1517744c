# Sourced by every scenario (busybox sh, cwd /out). `step NAME CMD...` runs CMD with stdout in
# NAME.out, stderr in NAME.err and the exit status in NAME.rc, and echoes all three to the
# console (the first lines; returning CMD's status), so the host-side checks
# (tests/vm/checks.py) judge files, not console scraping.
step() {
  name=$1
  shift
  echo "--- step $name: $*"
  t0=$(cut -d' ' -f1 /proc/uptime)
  "$@" >"$name.out" 2>"$name.err"
  rc=$?
  echo "$rc" >"$name.rc"
  head -n 150 "$name.out"; head -n 50 "$name.err"
  echo "--- step $name: exit $rc after $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{print b-a}') s"
  return "$rc"
}

# A tiny sweep that finishes in seconds even under TCG (emulated CPUs are 10-50x slower):
# Qwen2.5-0.5B's attention shape (2 KV heads, d=64), few decode steps, short sampling.
TINY="--model qwen2.5-0.5b --decode-steps 6 --warmup 1 --min-samples 3 --timeout 5 --accuracy-steps 2"

# Waits up to $2 seconds for path $1 (devices appear asynchronously after modprobe).
wait_for() {
  i=0
  while [ ! -e "$1" ] && [ "$i" -lt $(($2 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
  [ -e "$1" ]
}

# The kernel 6.1 path from a QEMU 7.2 CXL Type-3 (persistent) device to a CPU-less NUMA node:
# pmem region -> devdax namespace -> DAX memory onlined as system RAM.
make_cxl_node() {
  if ! wait_for /sys/bus/cxl/devices/mem0 20; then
    echo "no CXL memdev mem0 in the guest: cxl_pci did not bind the QEMU type-3 device" \
         "(kernel 6.12 + QEMU 7.2 fails so; use kernel 6.1, see tests/vm/README.md)"
    ls /sys/bus/cxl/devices
    return 1
  fi
  step cxl_create_region cxl create-region -d decoder0.0 -m -t pmem -w 1 mem0 || return 1
  step ndctl_create_namespace ndctl create-namespace -r region0 -m devdax || return 1
  step daxctl_reconfigure daxctl reconfigure-device -m system-ram -f dax0.0
}
