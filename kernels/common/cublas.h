#pragma once
// The cuBLAS and cuBLASLt error check, cuBLASLt's workspace, and ownership of their objects.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <cublasLt.h>

#include "kernels/common/cuda.h"

namespace ks {

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
template <class Handle, auto Destroy>
struct Destroyer {
  void operator()(Handle handle) const { Destroy(handle); }
};
template <class Handle, auto Destroy>
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, Destroyer<Handle, Destroy>>;

using MatmulPreference = Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

// cuBLASLt's algorithm preference that allows a workspace of kCublasWorkspaceBytes.
inline MatmulPreference workspace_preference() {
  cublasLtMatmulPreference_t raw = nullptr;
  KS_CUBLAS(cublasLtMatmulPreferenceCreate(&raw));
  MatmulPreference preference(raw);
  const std::uint64_t workspace = kCublasWorkspaceBytes;
  KS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                 sizeof workspace));
  return preference;
}

}  // namespace ks
