// detect_virtual_machine on small trees: the CPUID 'hypervisor' flag and DMI vendor names are
// each enough evidence; bare hardware (neither) gives "" so its probe figures stay unlabelled.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "memtier/virtualization.h"

namespace hb::memtier {
namespace {

namespace fs = std::filesystem;

struct Tree {
  static inline int count = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("hb_vm_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
  Tree() { fs::remove_all(dir); }
  ~Tree() { fs::remove_all(dir); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
  std::string root() const { return dir.string(); }
};

TEST(Virtualization, QemuGuestFromFlagAndDmi) {
  Tree t;
  t.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2 avx2 hypervisor lahf_lm\n");
  t.write("sys/class/dmi/id/sys_vendor", "QEMU\n");
  t.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
  EXPECT_EQ(detect_virtual_machine(t.root()),
            "cpuinfo flag 'hypervisor'; DMI QEMU Standard PC (Q35 + ICH9, 2009)");
}

TEST(Virtualization, DmiAloneOrFlagAlone) {
  Tree t;
  t.write("proc/cpuinfo", "flags\t\t: fpu sse2\n");
  t.write("sys/class/dmi/id/sys_vendor", "VMware, Inc.\n");
  EXPECT_EQ(detect_virtual_machine(t.root()), "DMI VMware, Inc.");
  Tree u;
  u.write("proc/cpuinfo", "flags\t\t: fpu hypervisor\n");
  EXPECT_EQ(detect_virtual_machine(u.root()), "cpuinfo flag 'hypervisor'");
}

TEST(Virtualization, BareMetalIsUnlabelled) {
  Tree t;
  t.write("proc/cpuinfo",
          "flags\t\t: fpu sse2 avx2 hypervisorx\n");  // a lookalike word is not the flag
  t.write("sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
  t.write("sys/class/dmi/id/product_name", "PowerEdge R760\n");
  EXPECT_EQ(detect_virtual_machine(t.root()), "");
}

}  // namespace
}  // namespace hb::memtier
