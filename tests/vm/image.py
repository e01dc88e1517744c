"""Builds the guest's initramfs: busybox, hybridbench and the memory tools with every shared
library they load, the CXL/DAX/virtio kernel modules (with their dependencies and a depmod
index, so busybox modprobe and libkmod inside ndctl/daxctl both find them), /init and the
scenario scripts. Written as an uncompressed newc cpio: the kernel takes it as is, and skipping
gzip saves guest time under TCG (decompression is emulated too)."""
import os
import re
import shutil
import subprocess
import lzma

# Programs the guest runs besides hybridbench (Debian paths; ndctl ships /usr/bin/cxl).
TOOLS = ["/usr/bin/numactl", "/usr/bin/cxl", "/usr/bin/ndctl", "/usr/bin/daxctl"]

# Modules for the CXL region -> nvdimm -> devdax -> system-ram path, and virtio-blk for the
# results disk. Dependencies are added from modules.dep.
MODULES = ["cxl_acpi", "cxl_pci", "cxl_mem", "cxl_pmem", "cxl_port", "libnvdimm", "nd_pmem",
           "dax_pmem", "device_dax", "kmem", "virtio_pci", "virtio_blk"]

# The guest has 2 GiB and the initramfs lives in it: a binary that loads more than this (a CUDA
# build that links cuBLAS dynamically would: 100s of MiB) is refused with the way out.
MAX_LIBRARY_BYTES = 256 << 20

# hwloc finds PCI devices through this plugin (dlopen'ed, so ldd does not list it).
HWLOC_PLUGINS = ["/usr/lib/x86_64-linux-gnu/hwloc/hwloc_pci.so"]


def shared_libs(path):
    """Absolute paths of the libraries `path` loads, the dynamic loader included."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+)\s+\(0x", line)
        if m:
            libs.append(m.group(1))
        elif "not found" in line:
            raise RuntimeError(f"{path}: ldd says a library is missing: {line.strip()}")
    return libs


def module_closure(moddir, names):
    """Relative .ko paths of `names` and everything they depend on, from modules.dep."""
    deps = {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            mod, _, rest = line.partition(":")
            deps[mod] = rest.split()
    by_name = {}
    for mod in deps:
        base = os.path.basename(mod).split(".ko")[0].replace("-", "_")
        by_name[base] = mod
    todo = []
    for n in names:
        if n in by_name:  # built into this kernel when absent: nothing to load
            todo.append(by_name[n])
    seen = set()
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(deps.get(m, []))
    return sorted(seen)


def copy_into(root, src, dst=None):
    dst = os.path.join(root, (dst or src).lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(os.path.realpath(src), dst)  # soname symlinks become the files they name


def write_cpio(root, out_path):
    """newc cpio of the tree under `root` (owner root, as the kernel's unpacker expects)."""
    ino = [1000]

    def entry(f, name, mode, data=b"", nlink=1):
        ino[0] += 1
        hdr = "070701" + "".join("%08X" % v for v in (
            ino[0], mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0))
        f.write(hdr.encode() + name.encode() + b"\0")
        f.write(b"\0" * ((4 - (110 + len(name) + 1) % 4) % 4))
        f.write(data)
        f.write(b"\0" * ((4 - len(data) % 4) % 4))

    with open(out_path, "wb") as f:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            if rel != ".":
                entry(f, rel, 0o040755, nlink=2)
            for fn in sorted(filenames):
                p = os.path.join(dirpath, fn)
                name = os.path.normpath(os.path.join(rel, fn))
                if os.path.islink(p):
                    entry(f, name, 0o120777, os.readlink(p).encode())
                else:
                    with open(p, "rb") as src:
                        entry(f, name, 0o100000 | (os.stat(p).st_mode & 0o777), src.read())
        entry(f, "TRAILER!!!", 0)


def depmod():
    for p in (shutil.which("depmod"), "/usr/sbin/depmod", "/sbin/depmod"):
        if p and os.path.exists(p):
            return p
    raise RuntimeError("depmod not found (Debian package kmod)")


def build_initramfs(out_path, staging, binary, kernel_version, init_script, scenarios, busybox):
    """Stages the guest tree in `staging` and writes it to `out_path`."""
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    for d in ("bin", "dev", "proc", "sys", "tmp", "out", "etc", "run"):
        os.makedirs(os.path.join(staging, d), exist_ok=True)
    copy_into(staging, busybox, "/bin/busybox")
    os.symlink("busybox", os.path.join(staging, "bin/sh"))
    copy_into(staging, binary, "/usr/bin/hybridbench")
    libs = set()
    for exe in [binary] + TOOLS + [p for p in HWLOC_PLUGINS if os.path.exists(p)]:
        libs.update(shared_libs(exe))
    total = sum(os.path.getsize(os.path.realpath(lib)) for lib in libs)
    if total > MAX_LIBRARY_BYTES:
        big = sorted(libs, key=lambda lib: -os.path.getsize(os.path.realpath(lib)))[:3]
        raise RuntimeError(f"{binary} and the tools load {total >> 20} MiB of libraries (largest: {', '.join(big)}), "
                           f"too much for the guest's memory; give vm.py a CPU-only build "
                           f"(cmake -DHYBRIDBENCH_CUDA=OFF) with --binary")
    for exe in TOOLS + [p for p in HWLOC_PLUGINS if os.path.exists(p)]:
        copy_into(staging, exe)
    for lib in libs:
        copy_into(staging, lib)
    # Kernel modules: decompress .ko.xz (6.12 ships them so; busybox modprobe cannot read them).
    src_mods = f"/lib/modules/{kernel_version}"
    dst_mods = os.path.join(staging, f"lib/modules/{kernel_version}")
    for rel in module_closure(src_mods, MODULES):
        dst = os.path.join(dst_mods, rel[:-3] if rel.endswith(".xz") else rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if rel.endswith(".xz"):
            with lzma.open(os.path.join(src_mods, rel)) as s, open(dst, "wb") as d:
                d.write(s.read())
        else:
            shutil.copy2(os.path.join(src_mods, rel), dst)
    for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        if os.path.exists(os.path.join(src_mods, f)):
            shutil.copy2(os.path.join(src_mods, f), dst_mods)
    subprocess.run([depmod(), "-b", staging, kernel_version], check=True)
    shutil.copy2(init_script, os.path.join(staging, "init"))
    os.chmod(os.path.join(staging, "init"), 0o755)
    # Every scenario goes in, so one image serves them all (the kernel command line picks one).
    os.makedirs(os.path.join(staging, "scenarios"))
    for script in scenarios:
        dst = os.path.join(staging, "scenarios", os.path.basename(script))
        shutil.copy2(script, dst)
        os.chmod(dst, 0o755)
    write_cpio(staging, out_path)
