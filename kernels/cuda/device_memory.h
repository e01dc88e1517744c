#pragma once
// The two kinds of memory the CUDA accelerator hands out through hb::BufferAllocator:
//  * device memory (plain cudaMalloc, never managed) under a capacity budget, so "does not fit
//    in HBM" is an hb::CapacityError that the runner reports as status "oom";
//  * staging memory: host memory from a host allocator, pinned and mapped with
//    cudaHostRegister, so copies run at full link speed and overlap, and kernels may read it.
//    The host allocator decides the NUMA placement: memtier's node-bound allocator when the
//    caller provides one (CudaAccelerator::set_host_allocator), else plain first-touch memory
//    labelled with the requested node.
#include <functional>
#include <memory>

#include "core/memory.h"
#include "kernels/cuda/device_context.h"

namespace hb::cuda {

using HostAllocatorFactory = std::function<std::shared_ptr<BufferAllocator>(int numa_node)>;

std::shared_ptr<BufferAllocator> make_device_allocator(std::shared_ptr<DeviceContext> ctx,
                                                       int64_t capacity);
std::shared_ptr<BufferAllocator> make_pinned_allocator(
    std::shared_ptr<DeviceContext> ctx, std::shared_ptr<BufferAllocator> host_source);

}  // namespace hb::cuda
