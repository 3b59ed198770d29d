#pragma once
// What the CUDA implementations of distill_cosine_loss share (only .cu files include this): a
// cuBLASLt product, the device input generator, and the base instance that holds inputs and
// gradients and binds the modes and their checks.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/common/cublas.h"
#include "kernels/common/cuda.h"
#include "kernels/distill_cosine/cuda_distill.h"
#include "kernels/distill_cosine/distill_cosine.h"

namespace ks::distill::cuda {

// One cuBLASLt product in column-major terms, D = alpha·op(A)·op(B) + beta·C with C = D, fp32
// accumulation; the algorithm is chosen once by the heuristic. `alignment` is the largest power of
// two (≤ 256) that every pointer passed to run() is a multiple of, in bytes.
struct MatmulShape {
  bool transpose_a = false, transpose_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldd = 0;
  cudaDataType_t ab_type = CUDA_R_16BF;
  cudaDataType_t d_type = CUDA_R_16BF;
  bool bias = false;  // adds a vector of m values (type ab_type) to every column of D
  std::uint32_t alignment = 256;
};

class Matmul {
 public:
  Matmul(cublasLtHandle_t handle, const MatmulShape& shape);
  void run(const void* a, const void* b, void* d, float beta, const void* bias, void* workspace,
           cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  MatmulShape shape_;
  Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> desc_;
  Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> a_, b_, d_;
  cublasLtMatmulAlgo_t algo_{};
};

// The largest power of two, at most 256, dividing `bytes`: the alignment of base + bytes when base is
// a cudaMalloc pointer.
std::uint32_t alignment_of(std::int64_t bytes);

inline cudaDataType_t data_type(const Problem& p) { return p.bf16 ? CUDA_R_16BF : CUDA_R_32F; }

// The tensors of one point, generated on the device from (seed, tensor, index) exactly as
// make_inputs() does on the host.
struct DeviceInputs {
  void *xs = nullptr, *ws = nullptr, *xt = nullptr, *wt = nullptr;  // dtype
  void *bs = nullptr, *bt = nullptr;                                // dtype, null without bias
  std::int64_t* targets = nullptr;
  std::int64_t labelled = 0;  // tokens whose target is not ignore_index
};
DeviceInputs generate_inputs(const Problem& p, DeviceMemory& memory, cudaStream_t stream);

// Scales n values by *factor unless it is 1 (Liger's backward). `values` has dtype `type`.
void scale_unless_one(void* values, cudaDataType_t type, std::int64_t n, const float* factor, cudaStream_t stream);

// Fills n values of type `type` with NaN, so that an unwritten output fails every check.
void poison(void* values, cudaDataType_t type, std::int64_t n, cudaStream_t stream);

// Copies n values of type `type` to the host as doubles.
std::vector<double> download(const void* values, cudaDataType_t type, std::int64_t n);
std::vector<float> download_floats(const void* values, cudaDataType_t type, std::int64_t n);

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
  void forward_with_gradients();
  void backward();
  void poison_outputs();
  CheckResult check(const std::string& mode);

  Problem problem_;
  DeviceMemory memory_;
  Owned<cublasLtHandle_t, cublasLtDestroy> lt_;
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
