#pragma once
// HB_HD marks a function compiled for both sides: __host__ __device__ under nvcc, a plain inline
// function under the C++ compiler. Headers of index math and formulas use it so one copy serves
// the kernels (.cu), the host launchers (.cpp) and the CPU-only tests, which include these
// headers in builds without CUDA.
#if defined(__CUDACC__)
#define HB_HD __host__ __device__ __forceinline__
#else
#define HB_HD inline
#endif
