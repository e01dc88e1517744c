"""The guest machines (QEMU 7.2 command lines) and one boot with a
hard time-out. TCG only: KVM on these hosts is kvm_pvm, which aborts or hangs (see the notes)."""
import os
import signal
import subprocess
import tarfile
import time

# Node 0: 2 CPUs + 1 GiB; node 1: 1 GiB, no CPUs, SLIT 20, HMAT half the bandwidth and three
# times the latency of node 0 -- a "far memory" node as firmware describes one.
NUMA_HMAT = [
    "-machine", "q35,hmat=on", "-smp", "2", "-m", "2G",
    "-object", "memory-backend-ram,id=m0,size=1G", "-object", "memory-backend-ram,id=m1,size=1G",
    "-numa", "node,nodeid=0,memdev=m0,cpus=0-1", "-numa", "node,nodeid=1,memdev=m1,initiator=0",
    "-numa", "dist,src=0,dst=1,val=20",
    "-numa", "hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=10",
    "-numa", "hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=10G",
    "-numa", "hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=30",
    "-numa", "hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=5G",
]

# The same plus a CXL Type-3 device (256 MiB persistent memdev + label area) behind a CXL host
# bridge with a 4 GiB fixed memory window. QEMU 7.2 has no volatile CXL memdev, so the guest
# makes a node from it via pmem region -> devdax namespace -> daxctl system-ram (node 2).
CXL = [a if a != "q35,hmat=on" else "q35,cxl=on,hmat=on" for a in NUMA_HMAT]
CXL[CXL.index("2G")] = "2G,maxmem=8G,slots=4"
CXL += [
    "-object", "memory-backend-ram,id=cxl-mem0,size=256M",
    "-object", "memory-backend-ram,id=cxl-lsa0,size=1M",
    "-device", "pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1",
    "-device", "cxl-rp,port=0,bus=cxl.1,id=root_port13,chassis=0,slot=2",
    "-device", "cxl-type3,bus=root_port13,memdev=cxl-mem0,lsa=cxl-lsa0,id=cxl-pmem0",
    "-M", "cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G",
]

TOPOLOGIES = {"numa-hmat": NUMA_HMAT, "cxl": CXL}


class BootResult:
    def __init__(self, console, files, seconds, timed_out, exit_marker):
        self.console = console          # guest serial console text
        self.files = files              # name -> bytes, from the results disk
        self.seconds = seconds          # wall time from QEMU start to exit
        self.timed_out = timed_out
        self.exit_marker = exit_marker  # scenario exit status from the console, None if absent


def boot(qemu, kernel, initrd, topology, scenario, workdir, timeout_s):
    """Boots one guest, returns a BootResult. The whole QEMU process group is killed at the
    time-out, so a hung guest can never outlive the test."""
    os.makedirs(workdir, exist_ok=True)
    disk = os.path.join(workdir, f"results-{scenario}.img")
    console_path = os.path.join(workdir, f"console-{scenario}.log")
    with open(disk, "wb") as f:  # zeroed, so tar stops at the guest's archive end
        f.truncate(64 << 20)
    cmd = [qemu, "-accel", "tcg", "-cpu", "max", *TOPOLOGIES[topology],
           "-kernel", kernel, "-initrd", initrd,
           "-append", f"console=ttyS0 quiet panic=-1 hb_scenario={scenario}",
           # On pcie.0 by name: an unplaced device would land on the CXL host bridge and fail.
           "-drive", f"file={disk},format=raw,if=none,id=results",
           "-device", "virtio-blk-pci,drive=results,bus=pcie.0",
           "-display", "none", "-monitor", "none", "-serial", f"file:{console_path}",
           "-no-reboot", "-nic", "none"]
    with open(os.path.join(workdir, f"qemu-{scenario}.cmd"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    seconds = time.monotonic() - start
    console = out.decode(errors="replace")
    if os.path.exists(console_path):
        with open(console_path, errors="replace") as f:
            console = f.read() + ("\n[qemu] " + console if console.strip() else "")
    exit_marker = None
    for line in console.splitlines():
        if line.startswith("=== HB-SCENARIO-EXIT "):
            exit_marker = int(line.split()[2])
    files = {}
    try:
        with tarfile.open(disk) as tar:
            for m in tar.getmembers():
                if m.isfile():
                    files[os.path.normpath(m.name)] = tar.extractfile(m).read()
    except tarfile.TarError:
        pass  # no archive: the console and the markers tell what happened
    return BootResult(console, files, seconds, timed_out, exit_marker)
