// peak_flops's `cuda` implementation: D = Aᵀ·B through cuBLASLt, column-major, A and B stored K×N
// (the "TN" layout, the one cuBLASLt's fp8 products require, used for every dtype so that all take
// the same path), the fastest of cuBLASLt's top heuristic algorithms (kernels/common/cublaslt.h), on
// the instance's own stream.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <memory>
#include <optional>
#include <type_traits>

#include "kernels/common/cublaslt.h"
#include "kernels/common/inputs.h"
#include "kernels/peak_flops/peak_flops.h"

namespace ks::peak_flops {
namespace {

constexpr int kThreads = 256;
constexpr int kSampled = 16;  // entries of D a check compares

template <class T> __device__ double to_double(T v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) return static_cast<float>(v);
  else return static_cast<double>(v);
}

// One block per sampled entry: its float64 sum over k of the stored inputs, and the sum of the
// products' magnitudes (the scale its error is judged against), with D's value beside them.
template <class In, class Out> __global__ void reference(const In* a, const In* b, const Out* d, std::int64_t n,
                                                         std::uint64_t seed, double* sums /* 3 per entry */) {
  __shared__ double partial[2][kThreads];
  const auto row = static_cast<std::int64_t>(counter_uniform(seed, 9, 2 * blockIdx.x) * n);
  const auto col = static_cast<std::int64_t>(counter_uniform(seed, 9, 2 * blockIdx.x + 1) * n);
  double sum = 0, magnitude = 0;
  for (std::int64_t k = threadIdx.x; k < n; k += blockDim.x) {
    const double product = to_double(a[row * n + k]) * to_double(b[col * n + k]);
    sum += product;
    magnitude += fabs(product);
  }
  partial[0][threadIdx.x] = sum;
  partial[1][threadIdx.x] = magnitude;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      partial[0][threadIdx.x] += partial[0][threadIdx.x + half];
      partial[1][threadIdx.x] += partial[1][threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    sums[3 * blockIdx.x] = partial[0][0];
    sums[3 * blockIdx.x + 1] = partial[1][0];
    sums[3 * blockIdx.x + 2] = to_double(d[col * n + row]);
  }
}

// How each dtype is laid out and computed.
struct Arithmetic {
  cudaDataType_t in, out;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  double tolerance;  // of an entry's error over its products' magnitudes
};

Arithmetic arithmetic_of(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 1e-12};
    case Dtype::fp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1e-5};
    case Dtype::tf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 2e-3};
    case Dtype::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1e-2};
    case Dtype::fp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2e-3};
    case Dtype::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1e-2};
  }
  throw std::logic_error("peak_flops: unknown dtype");
}

class CudaPeakFlops final : public Instance {
 public:
  explicit CudaPeakFlops(const Parameters& params) : p_(params), math_(arithmetic_of(p_.dtype)) {
    require_support();
    const auto n = static_cast<std::size_t>(p_.size);
    a_ = memory_.allocate_bytes(n * n * static_cast<std::size_t>(input_bytes(p_.dtype)), "A");
    b_ = memory_.allocate_bytes(n * n * static_cast<std::size_t>(input_bytes(p_.dtype)), "B");
    d_ = memory_.allocate_bytes(n * n * static_cast<std::size_t>(output_bytes(p_.dtype)), "D");
    workspace_ = memory_.allocate_bytes(kCublasWorkspaceBytes, "cuBLAS workspace");
    sums_ = memory_.allocate<double>(3 * kSampled, "check sums");
    fill_inputs();
    const LtMatrix in{math_.in, p_.size, p_.size, p_.size}, out{math_.out, p_.size, p_.size, p_.size};
    matmul_.emplace(LtProduct(math_.compute, math_.scale, CUBLAS_OP_T, CUBLAS_OP_N, in, in, out),
                    FastestMatmul::Operands{a_, b_, d_, workspace_, stream_},
                    concat("peak_flops ", p_.dtype_name, " ", p_.size, "³"));
    stream_.synchronize();
  }

  BoundMode bind(const std::string&) override {
    return run_then_compare([this] { matmul_->run(); }, [this] { return check(); });
  }
  void* stream() const override { return stream_.get(); }
  std::size_t device_bytes() const override { return memory_.total_bytes(); }

 private:
  void require_support() const {
    const int major = device_attribute(cudaDevAttrComputeCapabilityMajor);
    const int minor = device_attribute(cudaDevAttrComputeCapabilityMinor);
    if (p_.dtype == Dtype::fp8 && major * 10 + minor < 89)
      throw std::invalid_argument(
          concat("peak_flops fp8: needs compute capability 8.9 or newer, this GPU has ", major, ".", minor));
  }

  // Calls `body` with a null pointer of the dtype's input and output element types.
  template <class Body> void with_types(Body&& body) const {
    switch (p_.dtype) {
      case Dtype::fp64: return body(static_cast<double*>(nullptr), static_cast<double*>(nullptr));
      case Dtype::fp32:
      case Dtype::tf32: return body(static_cast<float*>(nullptr), static_cast<float*>(nullptr));
      case Dtype::bf16: return body(static_cast<__nv_bfloat16*>(nullptr), static_cast<__nv_bfloat16*>(nullptr));
      case Dtype::fp16: return body(static_cast<__half*>(nullptr), static_cast<__half*>(nullptr));
      case Dtype::fp8: return body(static_cast<__nv_fp8_e4m3*>(nullptr), static_cast<__nv_bfloat16*>(nullptr));
    }
  }

  void fill_inputs() {
    const std::int64_t count = p_.size * p_.size;
    const auto elements = static_cast<std::uint64_t>(count);
    with_types([&](auto* in, auto*) {
      using In = std::remove_pointer_t<decltype(in)>;
      const unsigned blocks = grid_for(count, kThreads);
      fill_symmetric<<<blocks, kThreads, 0, stream_>>>(static_cast<In*>(a_), elements, p_.seed, 1);
      fill_symmetric<<<blocks, kThreads, 0, stream_>>>(static_cast<In*>(b_), elements, p_.seed, 2);
      KS_CUDA_LAUNCHED();
    });
  }

  // Each sampled entry of D against the float64 sum of its products: their difference over the sum
  // of the products' magnitudes, within the dtype's tolerance (its rounding of the result, and TF32's
  // of the inputs).
  CheckResult check() {
    with_types([&](auto* in, auto* out) {
      using In = std::remove_pointer_t<decltype(in)>;
      using Out = std::remove_pointer_t<decltype(out)>;
      reference<<<kSampled, kThreads, 0, stream_>>>(static_cast<const In*>(a_), static_cast<const In*>(b_),
                                                    static_cast<const Out*>(d_), p_.size, p_.seed, sums_);
      KS_CUDA_LAUNCHED();
    });
    double host[3 * kSampled];
    KS_CUDA(cudaMemcpyAsync(host, sums_, sizeof host, cudaMemcpyDeviceToHost, stream_));
    stream_.synchronize();
    double worst = 0;
    for (int i = 0; i < kSampled; ++i) {
      const double error = std::abs(host[3 * i + 2] - host[3 * i]) / host[3 * i + 1];
      if (!(error <= worst)) worst = error;  // a NaN is the worst there is
    }
    return {worst <= math_.tolerance,
            concat(kSampled, " sampled entries of the ", p_.dtype_name, " product against float64 sums: largest error ",
                   worst, " of the products' magnitude (tolerance ", math_.tolerance, ")")};
  }

  Problem p_;
  Arithmetic math_;
  DeviceMemory memory_;
  Stream stream_;
  void *a_ = nullptr, *b_ = nullptr, *d_ = nullptr, *workspace_ = nullptr;
  double* sums_ = nullptr;
  std::optional<FastestMatmul> matmul_;  // made once A and B are filled
};

}  // namespace
}  // namespace ks::peak_flops

KS_IMPLEMENTATION(peak_flops, cuda, cuda, "cuBLASLt matmul, Aᵀ·B, the fastest of the top 8 heuristic algorithms") {
  return std::make_unique<ks::peak_flops::CudaPeakFlops>(params);
}
