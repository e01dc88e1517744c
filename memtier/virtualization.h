#pragma once
// Whether this process runs inside a virtual machine, with the evidence. Probe figures measured
// in a guest describe the hypervisor's memory (under QEMU TCG, an emulation 10-50x slower than
// the host) at least as much as the hardware's, so the probe labels them.
#include <string>

namespace hb::memtier {

// "" when nothing points to a hypervisor; else the evidence, e.g.
// "cpuinfo flag 'hypervisor'; DMI QEMU Standard PC (Q35 + ICH9, 2009)". `root` prefixes
// /proc/cpuinfo and /sys/class/dmi/id (a fixture tree in tests; "/" = this machine).
std::string detect_virtual_machine(const std::string& root = "/");

}  // namespace hb::memtier
