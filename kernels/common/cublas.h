#pragma once
// The cuBLAS and cuBLASLt error check, cuBLASLt's workspace size, and ownership of their objects.
//
// Both libraries are opened at their first call, not when a program starts (kernels/common/
// lazy_library.h says why): the functions below stand for the headers' ones inside namespace ks, so
// code in it calls cuBLAS as the headers declare it. A cuBLAS function not listed here fails to link:
// add it to the list.
#include <cstddef>
#include <memory>
#include <type_traits>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "kernels/common/cuda.h"
#include "kernels/common/lazy_library.h"

#define KS_CUBLAS_STRINGIFY(x) #x
#define KS_CUBLAS_SONAME(name, major) "lib" name ".so." KS_CUBLAS_STRINGIFY(major)

namespace ks {

// The sonames this build was compiled against, as the linker would have recorded them.
inline constexpr char kCublasLibrary[] = KS_CUBLAS_SONAME("cublas", CUBLAS_VER_MAJOR);
inline constexpr char kCublasLtLibrary[] = KS_CUBLAS_SONAME("cublasLt", CUBLAS_VER_MAJOR);

KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtCreate);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtDestroy);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtGetStatusName);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtGetStatusString);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtGetVersion);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmul);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmulAlgoGetHeuristic);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmulDescCreate);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmulDescDestroy);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmulDescSetAttribute);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmulPreferenceCreate);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmulPreferenceDestroy);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatmulPreferenceSetAttribute);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatrixLayoutCreate);
KS_LAZY_FUNCTION(kCublasLtLibrary, cublasLtMatrixLayoutDestroy);
KS_LAZY_FUNCTION(kCublasLibrary, cublasCreate);
KS_LAZY_FUNCTION(kCublasLibrary, cublasDestroy);
// cublasGemmEx is overloaded: the header adds a wrapper that takes the old cudaDataType compute type.
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                        const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                        const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
KS_LAZY_OVERLOAD(kCublasLibrary, cublasGemmEx, CublasGemmEx);
KS_LAZY_FUNCTION(kCublasLibrary, cublasSetStream);
KS_LAZY_FUNCTION(kCublasLibrary, cublasSetWorkspace);

// cuBLASLt needs a workspace to pick its fastest kernels on Hopper (32 MiB is NVIDIA's advice).
inline constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;

// Throws std::runtime_error naming the call, file:line, host and rank, and cuBLAS's status.
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(concat(call, " failed at ", file, ":", line, " (", where_this_runs(),
                                    "): ", cublasLtGetStatusName(status), " (", cublasLtGetStatusString(status), ")"));
}

#define KS_CUBLAS(call) ::ks::check_cublas((call), #call, __FILE__, __LINE__)

// A cuBLAS or cuBLASLt object destroyed with its owner, so that a constructor that throws halfway
// leaks nothing:  Owned<cublasLtHandle_t, cublasLtDestroy> handle_;  ...  handle_.reset(raw);
template <class Handle, auto Destroy> struct Destroyer {
  void operator()(Handle handle) const { Destroy(handle); }
};
template <class Handle, auto Destroy> using Owned =
    std::unique_ptr<std::remove_pointer_t<Handle>, Destroyer<Handle, Destroy>>;

}  // namespace ks
