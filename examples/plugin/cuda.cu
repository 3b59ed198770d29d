// axpy's `cuda` implementation: one grid-stride loop, fp32 arithmetic (a fused multiply-add), x and y
// generated on the device with the same values the host's check recomputes.
#include <cuda_bf16.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "axpy.h"
#include "kernels/common/cuda.h"

namespace axpy {
namespace {

constexpr int kThreads = 256;

__device__ inline float load(const float* values, std::int64_t i) { return values[i]; }
__device__ inline float load(const __nv_bfloat16* values, std::int64_t i) { return __bfloat162float(values[i]); }
__device__ inline void store(float* values, std::int64_t i, float value) { values[i] = value; }
__device__ inline void store(__nv_bfloat16* values, std::int64_t i, float value) {
  values[i] = __float2bfloat16_rn(value);
}

template <typename Element>
__global__ void fill(Element* out, std::int64_t n, std::uint64_t seed, std::uint64_t tensor) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    store(out, i, ks::counter_symmetric(seed, tensor, static_cast<std::uint64_t>(i)));
}

template <typename Element>
__global__ void axpy_kernel(std::int64_t n, float alpha, const Element* __restrict__ x, Element* __restrict__ y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    store(y, i, fmaf(alpha, load(x, i), load(y, i)));
}

// Element is float (fp32) or __nv_bfloat16.
template <typename Element> class CudaAxpy final : public ks::Instance {
 public:
  explicit CudaAxpy(const ks::Parameters& params) : s_(params), blocks_(ks::grid_for(s_.n, kThreads)) {
    x_ = memory_.allocate<Element>(static_cast<std::size_t>(s_.n), "x");
    y_ = memory_.allocate<Element>(static_cast<std::size_t>(s_.n), "y");
    generate(x_, kX);
    generate(y_, kY);
    stream_.synchronize();
  }

  // Every call adds alpha·x to y once more; the check starts again from the generated y.
  ks::BoundMode bind(const std::string&) override {
    return {[this] { run(); },
            [this] {
              generate(y_, kY);
              run();
              return check(s_, read_y().data());
            }};
  }
  void* stream() const override { return stream_.get(); }
  std::size_t device_bytes() const override { return memory_.total_bytes(); }

 private:
  void run() {
    axpy_kernel<<<blocks_, kThreads, 0, stream_>>>(s_.n, s_.alpha, x_, y_);
    KS_CUDA_LAUNCHED();
  }

  void generate(Element* values, Tensor tensor) {
    fill<<<blocks_, kThreads, 0, stream_>>>(values, s_.n, s_.seed, tensor);
    KS_CUDA_LAUNCHED();
  }

  // y as floats, once the stream has finished.
  std::vector<float> read_y() const {
    std::vector<Element> raw(static_cast<std::size_t>(s_.n));
    KS_CUDA(cudaMemcpyAsync(raw.data(), y_, raw.size() * sizeof(Element), cudaMemcpyDeviceToHost, stream_));
    stream_.synchronize();
    std::vector<float> y(raw.size());
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(raw[i]);
    return y;
  }

  Shape s_;
  ks::DeviceMemory memory_;
  ks::Stream stream_;
  unsigned blocks_;
  Element* x_ = nullptr;
  Element* y_ = nullptr;
};

}  // namespace
}  // namespace axpy

KS_IMPLEMENTATION(axpy, cuda, cuda, "a grid-stride loop of fused multiply-adds, fp32 arithmetic") {
  if (params.is("dtype", "bf16")) return std::make_unique<axpy::CudaAxpy<__nv_bfloat16>>(params);
  return std::make_unique<axpy::CudaAxpy<float>>(params);
}
