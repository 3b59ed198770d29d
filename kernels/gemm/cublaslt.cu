// gemm's `cublaslt` implementation: one cuBLASLt matmul, fp32 compute (no TF32, as torch.matmul on
// fp32 by default), bf16 in and out for bf16 (as torch.matmul returns it), a 32 MiB workspace, on the
// instance's own non-blocking stream. The algorithm is the fastest of cuBLASLt's top heuristic
// candidates, timed at setup (kernels/common/cublaslt_algorithm.h).
#include <memory>

#include "kernels/common/cublaslt_algorithm.h"
#include "kernels/gemm/device.cuh"

namespace ks::gemm {
namespace {

class CublasLtGemm final : public Instance {
 public:
  explicit CublasLtGemm(const Parameters& params) : d_(Shape(params)) {
    describe_product();
    const MatmulCandidates candidates =
        matmul_candidates(handle_.get(), matmul_.get(), b_layout_.get(), a_layout_.get(), c_layout_.get(),
                          c_layout_.get(), "gemm cublaslt " + d_.s.describe());
    algorithm_ =
        fastest_matmul(candidates, d_.stream, [this](const cublasLtMatmulAlgo_t& algo) { multiply_with(algo); });
  }

  BoundMode bind(const std::string&) override {
    return {[this] { multiply_with(algorithm_); },
            [this] {
              multiply_with(algorithm_);
              return d_.check();
            }};
  }
  void* stream() const override { return d_.stream.get(); }
  std::size_t device_bytes() const override { return d_.memory.total_bytes(); }

 private:
  // Column-major views of the row-major buffers: B as N×K, A as K×M, C as N×M, so that column-major
  // Cᵀ = Bᵀ·Aᵀ is row-major C = A·B with no transposes.
  void describe_product() {
    const Shape& s = d_.s;
    cublasLtHandle_t handle = nullptr;
    KS_CUBLAS(cublasLtCreate(&handle));
    handle_.reset(handle);
    cublasLtMatmulDesc_t matmul = nullptr;
    KS_CUBLAS(cublasLtMatmulDescCreate(&matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    matmul_.reset(matmul);
    cublasLtMatrixLayout_t layout = nullptr;
    KS_CUBLAS(cublasLtMatrixLayoutCreate(&layout, d_.type(), s.n, s.k, s.n));
    b_layout_.reset(layout);
    KS_CUBLAS(cublasLtMatrixLayoutCreate(&layout, d_.type(), s.k, s.m, s.k));
    a_layout_.reset(layout);
    KS_CUBLAS(cublasLtMatrixLayoutCreate(&layout, d_.type(), s.n, s.m, s.n));
    c_layout_.reset(layout);
  }

  void multiply_with(const cublasLtMatmulAlgo_t& algo) {
    const float alpha = 1.0f, beta = 0.0f;
    KS_CUBLAS(cublasLtMatmul(handle_.get(), matmul_.get(), &alpha, d_.b, b_layout_.get(), d_.a, a_layout_.get(), &beta,
                             d_.c, c_layout_.get(), d_.c, c_layout_.get(), &algo, d_.workspace, kCublasWorkspaceBytes,
                             d_.stream));
  }

  DeviceOperands d_;
  Owned<cublasLtHandle_t, cublasLtDestroy> handle_;
  Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> matmul_;
  Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> a_layout_, b_layout_, c_layout_;
  cublasLtMatmulAlgo_t algorithm_{};
};

}  // namespace
}  // namespace ks::gemm

KS_IMPLEMENTATION(gemm, cublaslt, cuda, "cuBLASLt matmul, fastest of 8 heuristic algorithms, 32 MiB workspace") {
  return std::make_unique<ks::gemm::CublasLtGemm>(params);
}
