#pragma once
// What the CUDA implementations of distill_cosine_loss share (only .cu files include this): a
// cuBLASLt product, the device input generator, and the base instance that holds inputs and
// gradients and binds the modes and their checks.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "kernels/common/cublaslt.h"
#include "kernels/common/cuda.h"
#include "kernels/distill_cosine/cuda_distill.h"
#include "kernels/distill_cosine/distill_cosine.h"

namespace ks::distill::cuda {

inline cudaDataType_t data_type(const Problem& p) { return p.bf16 ? CUDA_R_16BF : CUDA_R_32F; }

// One cuBLASLt product in column-major terms, D = alpha·op(A)·op(B) + beta·C with C = D, fp32
// accumulation, and with `bias` a vector of D's rows (of A's type) added to every column of D; the
// algorithm is chosen once by the heuristic. `alignment` is the largest power of two (≤ 256) that
// every pointer passed to run() is a multiple of, in bytes.
class Matmul {
 public:
  Matmul(cublasLtHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, const LtMatrix& a, const LtMatrix& b,
         const LtMatrix& d, bool bias, std::uint32_t alignment);
  void run(const void* a, const void* b, void* d, float beta, const void* bias, void* workspace,
           cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  bool bias_;
  LtProduct product_;
  cublasLtMatmulAlgo_t algo_{};
};

// The products of a pass over `rows` tokens, in column-major terms: the logits sᵀ (V×rows) =
// Ws(as hs×V)ᵀ·Xs(as hs×rows) and tᵀ = Wt(as H×V)ᵀ·Xt(as H×rows) (`hidden`: hs or H), written in
// `logits_type`, with the bias when `bias`; dXsᵀ (hs×rows) = Ws(as hs×V)·dZᵀ(as V×rows); and
// dWsᵀ (hs×V) = Xs(as hs×rows)·dZ(as V×rows)ᵀ.
Matmul logits_product(cublasLtHandle_t lt, const Problem& p, std::int64_t rows, std::int64_t hidden,
                      cudaDataType_t logits_type, bool bias, std::uint32_t alignment);
Matmul input_gradient_product(cublasLtHandle_t lt, const Problem& p, std::int64_t rows, std::uint32_t alignment);
Matmul weight_gradient_product(cublasLtHandle_t lt, const Problem& p, std::int64_t rows, std::uint32_t alignment);

// The four products of a pass over every token at once, without the bias (added apart, or not at all).
struct PassProducts {
  Matmul student, teacher, grad_x, grad_w;
};
PassProducts unchunked_products(cublasLtHandle_t lt, const Problem& p, cudaDataType_t logits_type);

// The tensors of one point, generated on the device from (seed, tensor, index) exactly as
// make_inputs() does on the host.
struct DeviceInputs {
  void *xs = nullptr, *ws = nullptr, *xt = nullptr, *wt = nullptr;  // dtype
  void *bs = nullptr, *bt = nullptr;                                // dtype, null without bias
  std::int64_t* targets = nullptr;
  std::int64_t labelled = 0;  // tokens whose target is not ignore_index
};
DeviceInputs generate_inputs(const Problem& p, DeviceMemory& memory, cudaStream_t stream);

// Column sums of a rows×cols row-major matrix of `type`, added to out (fp32, cols values).
void add_column_sums(const void* matrix, cudaDataType_t type, std::int64_t rows, std::int64_t cols, float* out,
                     cudaStream_t stream);

// The state both CUDA implementations share: stream, cuBLASLt handle, inputs, gradients and loss on
// the device, and the modes built from one forward pass with gradients or without.
class DistillInstance : public Instance {
 public:
  explicit DistillInstance(const Problem& p);

  BoundMode bind(const std::string& mode) override;
  std::size_t device_bytes() const override { return memory_.total_bytes(); }
  void* stream() const override { return stream_.get(); }

  // The loss and gradients of the last pass, copied to the host (synchronises).
  Result download_result() const;
  Inputs download_inputs() const;

 protected:
  // Enqueues one forward pass: the loss into loss_, and with_grad the gradients into grad_xs_,
  // grad_ws_, grad_bs_.
  virtual void forward(bool with_grad) = 0;
  // The other implementation, to compare with at shapes too large for the CPU reference.
  virtual std::unique_ptr<DistillInstance> make_counterpart() const = 0;
  virtual const char* name() const = 0;
  // forward(with_grad), remembering that gradients were stored.
  void forward_pass(bool with_grad);
  void backward();
  void poison_outputs();
  CheckResult check(const std::string& mode);

  Problem problem_;
  DeviceMemory memory_;
  LtHandle lt_ = make_lt_handle();
  Stream stream_;  // declared after memory_ and lt_, so destroyed (once its work is done) before them
  DeviceInputs in_;
  void* grad_xs_ = nullptr;       // BT×H/2, dtype
  void* grad_ws_ = nullptr;       // V×H/2, dtype
  float* grad_bs_ = nullptr;      // V, fp32 (small, so kept in full precision)
  double* loss_ = nullptr;        // accumulated by the row kernels
  float* grad_output_ = nullptr;  // the incoming gradient of backward: 1
  void* workspace_ = nullptr;
  double divisor_ = 1;  // N
  bool forward_done_ = false;
};

// The implementations, as DistillInstance (each one's counterpart is the other).
std::unique_ptr<DistillInstance> make_fused(const Problem& p, const FusedOptions& options);
std::unique_ptr<DistillInstance> make_naive(const Problem& p);

}  // namespace ks::distill::cuda
