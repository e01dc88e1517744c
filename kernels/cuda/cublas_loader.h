#pragma once
// cuBLAS opened on first use (dlopen), not linked. Only layer scope's GEMMs (layer_gemms.h) need
// it, and cuBLAS with its cuBLASLt is ~580 MiB of shared libraries: linked, every start of the
// binary would load them, a CUDA install without cuBLAS could not run even attention scope, and
// the VM tests' guests (tests/vm) could not hold the binary's libraries.
#include <cublas_v2.h>

namespace hb::cuda {

struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  // Spelled out: C++ sees an inline overload of cublasGemmEx too (cudaDataType compute type).
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  GemmEx gemm_ex = nullptr;
};

// Loads libcublas.so.<the major version built against> once; throws hb::Error naming the library
// and the fix when it or one of its functions is missing.
const CublasApi& cublas_api();

}  // namespace hb::cuda
