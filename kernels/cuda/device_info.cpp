#include "kernels/cuda/device_info.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"

namespace hb::cuda {

namespace {

std::string read_sysfs(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

int read_sysfs_int(const std::string& path, int fallback) {
  const std::string s = read_sysfs(path);
  try {
    return s.empty() ? fallback : std::stoi(s);
  } catch (...) {
    return fallback;
  }
}

// Informational attributes: some are deprecated in newer runtimes, so a failure gives 0
// instead of failing discovery.
int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

// Lower-case PCI bus id of a device ("0000:18:00.0"), as sysfs names it; empty on failure.
std::string bus_id_of(int dev) {
  char bus[32] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  std::string id = bus;
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return id;
}

std::string gib(int64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1LL << 30));
  return buf;
}

}  // namespace

int pcie_gen_of_speed(const std::string& speed) {
  double gts = 0;
  if (std::sscanf(speed.c_str(), "%lf", &gts) != 1) return -1;
  // GT/s per lane of each generation (Gen1..Gen6).
  const double table[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int g = 0; g < 6; ++g)
    if (gts > table[g] * 0.9 && gts < table[g] * 1.1) return g + 1;
  return -1;
}

std::string DeviceInfo::compute_capability() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

std::string DeviceInfo::summary() const {
  std::string s = "CC " + compute_capability() + ", " + std::to_string(sm_count) + " SMs, " +
                  gib(hbm_bytes) + " HBM (" + gib(free_bytes) + " free)";
  if (peak_hbm_gbs > 0) s += ", peak " + std::to_string(static_cast<int>(peak_hbm_gbs)) + " GB/s";
  if (pcie_max_gen > 0)
    s += ", PCIe Gen" + std::to_string(pcie_max_gen) + " x" + std::to_string(pcie_max_width) +
         " (now Gen" + std::to_string(pcie_gen) + " x" + std::to_string(pcie_width) + ")";
  s += ", bus " + bus_id + ", NUMA node " + std::to_string(numa_node);
  return s;
}

std::string unsupported_reason(const DeviceInfo& d) {
  if (!d.host_pointer_access)
    return "GPU " + std::to_string(d.index) + " (" + d.name +
           ") cannot use registered host pointers in kernels "
           "(cudaDevAttrCanUseHostPointerForRegisteredMem is 0), and the kernels here read staging "
           "memory by its host address";
  if (!d.memory_pools)
    return "GPU " + std::to_string(d.index) + " (" + d.name +
           ") does not support stream-ordered allocation (cudaMallocAsync)";
  return {};
}

DeviceInfo query_device_info(int index) {
  DeviceInfo d;
  d.index = index;
  HB_CUDA_CHECK(cudaSetDevice(index), "device " + std::to_string(index));
  cudaDeviceProp p{};
  HB_CUDA_CHECK(cudaGetDeviceProperties(&p, index), "device " + std::to_string(index));
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.hbm_bytes = static_cast<int64_t>(p.totalGlobalMem);
  d.l2_bytes = p.l2CacheSize;
  d.smem_per_sm = static_cast<int>(p.sharedMemPerMultiprocessor);
  d.mem_bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth, index);
  d.mem_clock_khz = attr(cudaDevAttrMemoryClockRate, index);
  if (d.mem_clock_khz > 0 && d.mem_bus_bits > 0)
    d.peak_hbm_gbs = 2.0 * d.mem_clock_khz * 1e3 * (d.mem_bus_bits / 8.0) / 1e9;
  d.host_pointer_access = attr(cudaDevAttrCanUseHostPointerForRegisteredMem, index) != 0;
  d.memory_pools = attr(cudaDevAttrMemoryPoolsSupported, index) != 0;
  size_t free_b = 0, total_b = 0;
  HB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), "device " + std::to_string(index));
  d.free_bytes = static_cast<int64_t>(free_b);
  d.bus_id = bus_id_of(index);
  if (d.bus_id.empty())
    throw Error("device " + std::to_string(index) + ": the CUDA runtime gives no PCI bus id", {},
                kExitFailure);
  // The CUDA runtime does not report the PCIe link or NUMA node; the PCI device's sysfs does.
  const std::string sys = "/sys/bus/pci/devices/" + d.bus_id + "/";
  d.pcie_gen = pcie_gen_of_speed(read_sysfs(sys + "current_link_speed"));
  d.pcie_max_gen = pcie_gen_of_speed(read_sysfs(sys + "max_link_speed"));
  d.pcie_width = read_sysfs_int(sys + "current_link_width", -1);
  d.pcie_max_width = read_sysfs_int(sys + "max_link_width", -1);
  d.numa_node = read_sysfs_int(sys + "numa_node", -1);
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  return d;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return out;
  }
  for (int i = 0; i < n; ++i) {
    try {
      out.push_back(query_device_info(i));
    } catch (...) {
      cudaGetLastError();
    }
  }
  return out;
}

std::vector<int> device_numa_nodes() {
  std::vector<int> out;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return out;
  }
  for (int i = 0; i < n; ++i) {
    const std::string bus = bus_id_of(i);
    out.push_back(bus.empty() ? -1
                              : read_sysfs_int("/sys/bus/pci/devices/" + bus + "/numa_node", -1));
  }
  return out;
}

}  // namespace hb::cuda
