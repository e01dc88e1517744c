#!/usr/bin/env python3
"""Entry point of the VM tests (CTest calls it; it also runs by hand).

  vm.py image --binary B --work DIR            build the initramfs (CTest fixture; exits 0 and
                                               builds nothing when the prerequisites are absent)
  vm.py run SCENARIO --binary B --work DIR     boot the scenario's machine, run it, check it

`run` exits 0 when every check passed, 1 when one failed, 77 (CTest SKIP_RETURN_CODE) with the
reason on stdout when QEMU, the kernel, busybox or the memory tools are missing."""
import argparse
import fcntl
import glob
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import checks  # noqa: E402
import image  # noqa: E402
import qemu  # noqa: E402

SKIP = 77
# Scenario -> the machine it boots (qemu.TOPOLOGIES).
SCENARIOS = {"numa-hmat": "numa-hmat", "cxl": "cxl", "bad-input": "cxl"}
PACKAGES = "qemu-system-x86 busybox-static linux-image-amd64 ndctl daxctl numactl"


def pick_kernel():
    """(vmlinuz, version): $HB_VM_KERNEL, else Debian 12's 6.1 (the CXL path needs it with
    QEMU 7.2: 6.12's cxl_pci cannot probe QEMU 7.2's device), else the newest installed."""
    env = os.environ.get("HB_VM_KERNEL")
    cands = [env] if env else sorted(glob.glob("/boot/vmlinuz-*"))
    cands = [c for c in cands if os.path.exists(c)]
    if not env:
        cands.sort(key=lambda c: (os.path.basename(c).startswith("vmlinuz-6.1."), c))
    if not cands:
        return None, None
    path = cands[-1]
    return path, os.path.basename(path)[len("vmlinuz-"):]


def missing_prerequisites(binary):
    """What stops a guest from booting here, as readable reasons (empty: all present)."""
    why = []
    qemu_bin = shutil.which("qemu-system-x86_64")
    if not qemu_bin:
        why.append("qemu-system-x86_64 not found")
    kernel, version = pick_kernel()
    if not kernel:
        why.append("no kernel image /boot/vmlinuz-*")
    elif not os.access(kernel, os.R_OK):
        why.append(f"kernel image {kernel} is not readable by this user")
    elif not os.path.isdir(f"/lib/modules/{version}"):
        why.append(f"no modules for kernel {version} in /lib/modules")
    if not os.path.exists("/bin/busybox") and not os.path.exists("/usr/bin/busybox"):
        why.append("busybox not found")
    for tool in image.TOOLS:
        if not os.path.exists(tool):
            why.append(f"{tool} not found")
    if binary and not os.path.exists(binary):
        why.append(f"hybridbench binary {binary} was not built")
    return why


def busybox_path():
    return next(p for p in ("/bin/busybox", "/usr/bin/busybox") if os.path.exists(p))


def ensure_image(binary, work):
    """Builds work/initramfs.cpio unless an image of the same inputs is there. A lock keeps
    concurrent tests from building it twice."""
    kernel, version = pick_kernel()
    scenarios = sorted(glob.glob(os.path.join(HERE, "scenarios", "*.sh")))
    inputs = [binary, os.path.join(HERE, "guest_init.sh"), os.path.join(HERE, "image.py")] + scenarios
    key = json.dumps([version] + [(p, os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in inputs])
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "initramfs.cpio")
    with open(os.path.join(work, "image.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        key_path = out + ".key"
        if os.path.exists(out) and os.path.exists(key_path) and open(key_path).read() == key:
            return out, kernel
        image.build_initramfs(out + ".tmp", os.path.join(work, "rootfs"), binary, version,
                              os.path.join(HERE, "guest_init.sh"), scenarios, busybox_path())
        os.replace(out + ".tmp", out)
        with open(key_path, "w") as f:
            f.write(key)
        print(f"vm: built {out} ({os.path.getsize(out) >> 20} MiB, kernel {version})")
    return out, kernel


def cmd_image(args):
    why = missing_prerequisites(args.binary)
    if why:
        print("vm: no image built (the VM tests will skip): " + "; ".join(why))
        return 0
    ensure_image(args.binary, args.work)
    return 0


def cmd_run(args):
    why = missing_prerequisites(args.binary)
    if why:
        print(f"SKIP: VM test '{args.scenario}' needs QEMU and a Debian kernel: " + "; ".join(why) +
              f". Install them with: apt-get install -y --no-install-recommends {PACKAGES}")
        return SKIP
    initrd, kernel = ensure_image(args.binary, args.work)
    result = qemu.boot(shutil.which("qemu-system-x86_64"), kernel, initrd, SCENARIOS[args.scenario],
                       args.scenario, args.work, args.timeout)
    results_dir = os.path.join(args.work, "results", args.scenario)
    shutil.rmtree(results_dir, ignore_errors=True)
    os.makedirs(results_dir)
    for name, data in result.files.items():
        with open(os.path.join(results_dir, name), "wb") as f:
            f.write(data)
    print(f"vm: {args.scenario}: guest ran {result.seconds:.1f} s (TCG, {SCENARIOS[args.scenario]} machine); "
          f"files in {results_dir}, console in {args.work}/console-{args.scenario}.log")
    failures = []
    if result.timed_out:
        failures.append(f"the guest did not power off within {args.timeout} s; QEMU was killed")
    elif result.exit_marker is None:
        failures.append("the scenario never reported its end (guest crash or panic; see the console)")
    elif result.exit_marker != 0:
        failures.append(f"the guest scenario exited {result.exit_marker}")
    if not result.files:
        failures.append("no results came back on the results disk")
    else:
        failures += checks.check(args.scenario, result.files)
    for line in checks.report(args.scenario, result.files):
        print("  " + line)
    if failures:
        print("\n--- guest console (last 80 lines) ---")
        print("\n".join(result.console.splitlines()[-80:]))
        for f in failures:
            print(f"FAIL: {f}")
        return 1
    print(f"vm: {args.scenario}: all checks passed")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    im = sub.add_parser("image")
    run = sub.add_parser("run")
    run.add_argument("scenario", choices=sorted(SCENARIOS))
    run.add_argument("--timeout", type=float, default=240, help="hard limit on the guest's wall time (s)")
    for p in (im, run):
        p.add_argument("--binary", required=True, help="hybridbench (CPU-only or CUDA; in the guest it runs on the cpu accelerator)")
        p.add_argument("--work", required=True, help="folder for the image, disks and logs")
    args = ap.parse_args()
    return cmd_image(args) if args.cmd == "image" else cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
