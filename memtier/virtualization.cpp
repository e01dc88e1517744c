#include "memtier/virtualization.h"

#include <fstream>
#include <sstream>

#include "memtier/fs_util.h"

namespace hb::memtier {

namespace {

// x86 guests see CPUID leaf 1 ECX bit 31, which Linux shows as the 'hypervisor' flag.
bool cpuinfo_has_hypervisor_flag(const std::string& root) {
  std::ifstream f(under_root(root, "proc/cpuinfo"));
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;)
      if (w == "hypervisor") return true;
    return false;  // the first CPU's flags answer for all
  }
  return false;
}

// Firmware vendors that only virtual machines report (DMI sys_vendor / product_name).
bool dmi_names_a_vm(const std::string& vendor, const std::string& product) {
  for (const char* v :
       {"QEMU", "VMware", "innotek", "Xen", "Parallels", "BHYVE", "Amazon EC2", "Google"})
    if (vendor.find(v) != std::string::npos) return true;
  return vendor.find("Microsoft") != std::string::npos &&
         product.find("Virtual Machine") != std::string::npos;
}

}  // namespace

std::string detect_virtual_machine(const std::string& root) {
  std::string evidence;
  if (cpuinfo_has_hypervisor_flag(root)) evidence = "cpuinfo flag 'hypervisor'";
  const std::string vendor =
      read_text(under_root(root, "sys/class/dmi/id/sys_vendor")).value_or("");
  const std::string product =
      read_text(under_root(root, "sys/class/dmi/id/product_name")).value_or("");
  if (dmi_names_a_vm(vendor, product) || (!evidence.empty() && !vendor.empty()))
    evidence += (evidence.empty() ? "" : "; ") + std::string("DMI ") + vendor +
                (product.empty() ? "" : " " + product);
  return evidence;
}

}  // namespace hb::memtier
