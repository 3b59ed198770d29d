// gemm's `cublaslt` implementation: one cuBLASLt matmul, fp32 compute (no TF32, as torch.matmul on
// fp32 by default), bf16 in and out for bf16 (as torch.matmul returns it), a 32 MiB workspace, on the
// instance's own non-blocking stream. The algorithm is the fastest of cuBLASLt's top heuristic
// candidates, timed at setup (kernels/common/cublaslt.h).
#include <memory>

#include "kernels/common/cublaslt.h"
#include "kernels/gemm/device.cuh"

namespace ks::gemm {
namespace {

// Column-major views of the row-major buffers: B as N×K, A as K×M, C as N×M, so that column-major
// Cᵀ = Bᵀ·Aᵀ is row-major C = A·B with no transposes.
LtProduct product_of(const DeviceOperands& d) {
  const Shape& s = d.s;
  return LtProduct(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N, {d.type(), s.n, s.k, s.n},
                   {d.type(), s.k, s.m, s.k}, {d.type(), s.n, s.m, s.n});
}

class CublasLtGemm final : public Instance {
 public:
  explicit CublasLtGemm(const Parameters& params)
      : d_(Shape(params)),
        matmul_(product_of(d_), {d_.b, d_.a, d_.c, d_.workspace, d_.stream}, "gemm cublaslt " + d_.s.describe()) {}

  BoundMode bind(const std::string&) override {
    return run_then_compare([this] { matmul_.run(); }, [this] { return d_.check(); });
  }
  void* stream() const override { return d_.stream.get(); }
  std::size_t device_bytes() const override { return d_.memory.total_bytes(); }

 private:
  DeviceOperands d_;
  FastestMatmul matmul_;
};

}  // namespace
}  // namespace ks::gemm

KS_IMPLEMENTATION(gemm, cublaslt, cuda, "cuBLASLt matmul, fastest of 8 heuristic algorithms, 32 MiB workspace") {
  return std::make_unique<ks::gemm::CublasLtGemm>(params);
}
