#include "kernels/cuda/cublas_loader.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "core/error.h"

namespace hb::cuda {

namespace {

const std::string kLibrary = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);

CublasApi load() {
  void* lib = dlopen(kLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw Error("cannot load " + kLibrary + " for the layer's GEMMs (" + (why ? why : "?") + ")",
                "install the CUDA toolkit's cuBLAS (or put its lib folder on LD_LIBRARY_PATH), or "
                "run with --scope attention");
  }
  auto sym = [&](const char* name) {
    void* p = dlsym(lib, name);
    if (!p)
      throw Error(kLibrary + " has no " + name,
                  "install a cuBLAS matching CUDA " + std::to_string(CUBLAS_VER_MAJOR));
    return p;
  };
  CublasApi api;
  api.create = reinterpret_cast<decltype(api.create)>(sym("cublasCreate_v2"));
  api.destroy = reinterpret_cast<decltype(api.destroy)>(sym("cublasDestroy_v2"));
  api.set_stream = reinterpret_cast<decltype(api.set_stream)>(sym("cublasSetStream_v2"));
  api.set_workspace = reinterpret_cast<decltype(api.set_workspace)>(sym("cublasSetWorkspace_v2"));
  api.gemm_ex = reinterpret_cast<decltype(api.gemm_ex)>(sym("cublasGemmEx"));
  return api;  // the library stays loaded for the process's life
}

}  // namespace

const CublasApi& cublas_api() {
  static std::once_flag once;
  static CublasApi api;
  std::call_once(once, [] { api = load(); });  // a throw leaves it unset: the next call retries
  return api;
}

}  // namespace hb::cuda
