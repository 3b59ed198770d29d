// gemm's `cublas` implementation: cublasGemmEx with cuBLAS's own default algorithm choice
// (CUBLAS_GEMM_DEFAULT), the call torch.matmul makes. Beside `cublaslt` it says whether a difference
// to torch is the library's choice of kernel. fp32 compute (no TF32), bf16 in and out for bf16.
#include <cublas_v2.h>

#include <memory>

#include "kernels/gemm/device.cuh"

namespace ks::gemm {
namespace {

class CublasGemm final : public Instance {
 public:
  explicit CublasGemm(const Parameters& params) : d_(Shape(params)) {
    cublasHandle_t handle = nullptr;
    KS_CUBLAS(cublasCreate(&handle));
    handle_.reset(handle);
    KS_CUBLAS(cublasSetStream(handle, d_.stream));
    KS_CUBLAS(cublasSetWorkspace(handle, d_.workspace, kCublasWorkspaceBytes));
  }

  BoundMode bind(const std::string&) override {
    return run_then_compare([this] { multiply(); }, [this] { return d_.check(); });
  }
  void* stream() const override { return d_.stream.get(); }
  std::size_t device_bytes() const override { return d_.memory.total_bytes(); }

 private:
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, and a row-major matrix read column-major is its
  // transpose: so B's buffer goes in as the first operand, A's as the second, no transposes.
  void multiply() {
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(d_.s.m), n = static_cast<int>(d_.s.n), k = static_cast<int>(d_.s.k);
    KS_CUBLAS(cublasGemmEx(handle_.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, d_.b, d_.type(), n, d_.a,
                           d_.type(), k, &beta, d_.c, d_.type(), n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  DeviceOperands d_;
  Owned<cublasHandle_t, cublasDestroy> handle_;
};

}  // namespace
}  // namespace ks::gemm

KS_IMPLEMENTATION(gemm, cublas, cuda, "cublasGemmEx with cuBLAS's default algorithm (as torch.matmul)") {
  return std::make_unique<ks::gemm::CublasGemm>(params);
}
