#pragma once
// What a CUDA device is, for `topo`, reports and split planning. Discovered with the CUDA
// runtime plus sysfs for the PCIe link and NUMA node (no NVML dependency). Plain C++: no CUDA
// headers, so cli/ and reports/ can include it.
#include <cstdint>
#include <string>
#include <vector>

namespace hb::cuda {

struct DeviceInfo {
  int index = -1;
  std::string name;    // "NVIDIA H200"
  std::string bus_id;  // PCI domain:bus:device.function, lower case ("0000:18:00.0")
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t hbm_bytes = 0;   // total device memory
  int64_t free_bytes = 0;  // free when queried
  int64_t l2_bytes = 0;
  int smem_per_sm = 0;    // shared memory per SM available to CTAs (bytes)
  int mem_clock_khz = 0;  // peak memory clock (0 if the runtime does not say)
  int mem_bus_bits = 0;
  double peak_hbm_gbs = 0;             // theoretical: 2 * clock * bus width / 8 (0 if unknown)
  int pcie_gen = -1, pcie_width = -1;  // current link (may be downtrained when idle)
  int pcie_max_gen = -1, pcie_max_width = -1;  // what the link can do
  int numa_node = -1;                          // host NUMA node local to the device (-1 unknown)
  bool host_pointer_access = false;            // kernels may dereference registered host pointers
  bool memory_pools = false;                   // cudaMallocAsync supported
  int driver_version = 0, runtime_version = 0;

  std::string compute_capability() const;  // "9.0"
  // One line for AcceleratorInfo::details and `topo`: SMs, memory, link, bus, node.
  std::string summary() const;
};

// Why this backend cannot drive the device, empty when it can: kernels read staging memory
// (pinned, mapped) by its host address, which needs host_pointer_access (every 64-bit Linux
// GPU with unified addressing has it), and scratch is stream-ordered (memory_pools).
std::string unsupported_reason(const DeviceInfo& d);

// Queries device `index`; throws hb::Error naming the failing call when it cannot.
DeviceInfo query_device_info(int index);

// All usable devices; empty (no throw) when there is no driver or no GPU.
std::vector<DeviceInfo> list_devices();

// The host NUMA node of every device this process sees, indexed in CUDA's own device order
// (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER applied, as --device counts), -1 where sysfs does
// not say; empty (no throw) without a driver or GPU. Creates no context.
std::vector<int> device_numa_nodes();

// PCIe generation of a sysfs link speed string ("16.0 GT/s PCIe" -> 4); -1 if unknown.
int pcie_gen_of_speed(const std::string& speed);

}  // namespace hb::cuda
