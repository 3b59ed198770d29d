#pragma once
// What the CUDA implementations of distill_cosine share (only .cu files include this): error
// checks, counted device memory, a cuBLASLt product, the device input generator, and the base
// instance that holds inputs and gradients and implements modes, checks and memory reporting.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/distill_cosine/cuda_distill.h"
#include "kernels/distill_cosine/distill_cosine.h"

namespace ks::distill::cuda {

// Joins its arguments as a stream writes them (fmt's compile-time format strings do not build under
// nvcc, so the .cu files build their messages with this).
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// Throws std::runtime_error naming the call, the file:line and CUDA's message.
void check_cuda(cudaError_t status, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);
#define KS_CUDA(call) ::ks::distill::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define KS_CUBLAS(call) ::ks::distill::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#define KS_CUDA_LAUNCHED() ::ks::distill::cuda::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// Every device allocation of an instance, so that device_bytes() counts them all.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();
  template <typename T>
  T* allocate(std::size_t count, const char* what) {
    return static_cast<T*>(allocate_bytes(count * sizeof(T), what));
  }
  std::size_t total_bytes() const { return total_; }

 private:
  void* allocate_bytes(std::size_t bytes, const char* what);
  std::vector<void*> blocks_;
  std::size_t total_ = 0;
};

// cuBLASLt needs a workspace to pick its fastest kernels on Hopper (32 MiB is NVIDIA's advice).
constexpr std::size_t kWorkspaceBytes = 32u << 20;

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
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;
  ~Matmul();
  void run(const void* a, const void* b, void* d, float beta, const void* bias, void* workspace,
           cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  MatmulShape shape_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

// The largest power of two, at most 256, dividing `bytes`: the alignment of base + bytes when base is
// a cudaMalloc pointer.
std::uint32_t alignment_of(std::int64_t bytes);

cudaDataType_t data_type(const Params& p);
std::size_t element_size(const Params& p);

// The tensors of one point, generated on the device from (seed, tensor, index) exactly as
// make_inputs() does on the host.
struct DeviceInputs {
  void *xs = nullptr, *ws = nullptr, *xt = nullptr, *wt = nullptr;  // dtype
  void *bs = nullptr, *bt = nullptr;                                 // dtype, null without bias
  std::int64_t* targets = nullptr;
  std::int64_t labelled = 0;  // tokens whose target is not ignore_index
};
DeviceInputs generate_inputs(const Params& p, DeviceMemory& memory, cudaStream_t stream);

// The loss's divisor N (normalize: tokens or valid_tokens), as the reference computes it.
double loss_divisor(const Params& p, std::int64_t labelled);

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
  explicit DistillInstance(const Params& p);
  ~DistillInstance() override;

  void prepare(const std::string& mode) override;
  void run(const std::string& mode) override;
  double flops(const std::string& mode) const override { return distill::flops(params_, mode); }
  double bytes(const std::string& mode) const override { return distill::bytes(params_, mode); }
  std::size_t device_bytes() const override { return memory_.total_bytes(); }
  CheckResult check(const std::string& mode) override;
  void* stream() const override { return stream_; }

  // The loss and gradients of the last pass, copied to the host (synchronises).
  Result download_result() const;
  Inputs download_inputs() const;
  const Params& params() const { return params_; }

 protected:
  // Enqueues one forward pass: the loss into loss_, and with_grad the gradients into grad_xs_,
  // grad_ws_, grad_bs_.
  virtual void forward(bool with_grad) = 0;
  // Makes the instance to compare with at shapes too large for the CPU reference.
  virtual std::unique_ptr<Instance> make_counterpart() const = 0;
  virtual const char* name() const = 0;
  void backward();
  void poison_outputs();

  Params params_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceMemory memory_;
  DeviceInputs in_;
  void* grad_xs_ = nullptr;   // BT×H/2, dtype
  void* grad_ws_ = nullptr;   // V×H/2, dtype
  float* grad_bs_ = nullptr;  // V, fp32 (small, so kept in full precision)
  double* loss_ = nullptr;    // accumulated by the row kernels
  float* grad_output_ = nullptr;  // the incoming gradient of backward: 1
  void* workspace_ = nullptr;
  double divisor_ = 1;  // N
  bool forward_done_ = false;
};

}  // namespace ks::distill::cuda
