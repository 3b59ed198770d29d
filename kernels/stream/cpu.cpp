// stream's `cpu` implementation: each call splits the arrays over the cores this process may use
// (kernels/common/cpu.h); each thread first touched the part it works on, so that its pages sit on
// its own memory node.
#include <memory>

#include "kernels/common/cpu.h"
#include "kernels/stream/stream.h"

namespace ks::stream {
namespace {

class CpuStream final : public Instance {
 public:
  explicit CpuStream(const Parameters& params)
      : p_(params), a_(new float[p_.elements]), b_(new float[p_.elements]), c_(new float[p_.elements]) {
    parallel_for(p_.elements, [this](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        a_[i] = 0.0f;
        b_[i] = p_.b(static_cast<std::uint64_t>(i));
        c_[i] = p_.c(static_cast<std::uint64_t>(i));
      }
    });
  }

  BoundMode bind(const std::string&) override {
    return run_then_compare([this] { call(); },
                            [this] { return check_sampled(p_, [this](std::int64_t i) { return a_[i]; }); });
  }

 private:
  void call() {
    float* __restrict a = a_.get();
    const float* __restrict b = b_.get();
    const float* __restrict c = c_.get();
    if (p_.op == Op::copy)
      parallel_for(p_.elements, [=](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) a[i] = b[i];
      });
    else
      parallel_for(p_.elements, [=](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) a[i] = b[i] + kScalar * c[i];
      });
  }

  Problem p_;
  std::unique_ptr<float[]> a_, b_, c_;
};

}  // namespace
}  // namespace ks::stream

KS_IMPLEMENTATION(stream, cpu, cpu, "a loop over each core's part of the arrays, every usable core") {
  return std::make_unique<ks::stream::CpuStream>(params);
}
