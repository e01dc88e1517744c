#pragma once
// NVTX ranges for Nsight Systems: wrap a phase (strategy step, CPU part, transfer, kernel,
// merge) in HB_NVTX_RANGE("name") and a profile of a run shows where time went and what
// overlapped. Ranges live in the "hybridbench" domain. In builds without CUDA (or without the
// NVTX headers) the helper compiles to nothing, so any folder may use it unconditionally.
// With CUDA, the calls are near-free unless a profiler is attached (NVTX v3 is header-only
// and only dispatches to a tool that injected itself).
#if defined(HB_WITH_CUDA) && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define HB_NVTX_ENABLED 1
#endif

namespace hb {

#ifdef HB_NVTX_ENABLED
inline nvtxDomainHandle_t nvtx_domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA("hybridbench");
  return d;
}
#endif

// Pushes a range on construction and pops it on destruction (same thread). `name` must
// outlive the constructor call only (NVTX copies it).
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
#ifdef HB_NVTX_ENABLED
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(nvtx_domain(), &a);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#ifdef HB_NVTX_ENABLED
    nvtxDomainRangePop(nvtx_domain());
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace hb

#define HB_NVTX_CONCAT_(a, b) a##b
#define HB_NVTX_CONCAT(a, b) HB_NVTX_CONCAT_(a, b)
#define HB_NVTX_RANGE(name) ::hb::NvtxRange HB_NVTX_CONCAT(hb_nvtx_range_, __LINE__)(name)
