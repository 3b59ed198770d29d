// stream's `cuda` implementation: a grid-stride loop of 16-byte loads and stores, a few blocks per
// multiprocessor. It is the plain copy kernel whose bandwidth `kernelsweep calibrate` reports.
#include <memory>

#include "kernels/common/cuda.h"
#include "kernels/stream/stream.h"

namespace ks::stream {
namespace {

constexpr int kThreads = 256;

// Elements come in multiples of 2^18 (whole MiB of fp32), so every array is whole float4s.
__global__ void copy(std::int64_t vectors, float4* __restrict__ a, const float4* __restrict__ b) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    a[i] = b[i];
}

__global__ void triad(std::int64_t vectors, float4* __restrict__ a, const float4* __restrict__ b,
                      const float4* __restrict__ c) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + kScalar * y.x, x.y + kScalar * y.y, x.z + kScalar * y.z, x.w + kScalar * y.w);
  }
}

class CudaStream final : public Instance {
 public:
  explicit CudaStream(const Parameters& params) : p_(params) {
    const auto n = static_cast<std::size_t>(p_.elements);
    a_ = memory_.allocate<float>(n, "a");
    b_ = memory_.allocate<float>(n, "b");
    c_ = memory_.allocate<float>(n, "c");
    KS_CUDA(cudaMemsetAsync(a_, 0, n * sizeof(float), stream_));
    generate_symmetric(b_, false, n, p_.seed, kB, stream_);  // p_.b(i) and p_.c(i)
    generate_symmetric(c_, false, n, p_.seed, kC, stream_);
    stream_.synchronize();
  }

  BoundMode bind(const std::string&) override {
    return run_then_compare([this] { call(); }, [this] { return check(); });
  }
  void* stream() const override { return stream_.get(); }
  std::size_t device_bytes() const override { return memory_.total_bytes(); }

 private:
  void call() {
    const std::int64_t vectors = p_.elements / 4;
    const unsigned blocks = grid_for(vectors, kThreads, 8);
    auto* a = reinterpret_cast<float4*>(a_);
    if (p_.op == Op::copy) copy<<<blocks, kThreads, 0, stream_>>>(vectors, a, reinterpret_cast<const float4*>(b_));
    else
      triad<<<blocks, kThreads, 0, stream_>>>(vectors, a, reinterpret_cast<const float4*>(b_),
                                              reinterpret_cast<const float4*>(c_));
    KS_CUDA_LAUNCHED();
  }

  CheckResult check() const {
    stream_.synchronize();
    return check_sampled(p_, [this](std::int64_t i) { return download_floats(a_ + i, 1, false)[0]; });
  }

  Problem p_;
  DeviceMemory memory_;
  Stream stream_;
  float *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
};

}  // namespace
}  // namespace ks::stream

KS_IMPLEMENTATION(stream, cuda, cuda, "a grid-stride loop of 16-byte loads and stores") {
  return std::make_unique<ks::stream::CudaStream>(params);
}
