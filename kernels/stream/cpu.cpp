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
  // Copy reads b alone: c is made for triad only. Each array is first touched page by page, and on
  // a node whose ranks all calibrate at once (each runs copy and triad) an unused third of copy's
  // memory was a sixth of the calibration's page faults.
  explicit CpuStream(const Parameters& params)
      : p_(params),
        a_(new float[p_.elements]),
        b_(new float[p_.elements]),
        c_(p_.op == Op::triad ? new float[p_.elements] : nullptr) {
    parallel_for(p_.elements, [this](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        a_[i] = 0.0f;
        b_[i] = p_.b(static_cast<std::uint64_t>(i));
        if (c_) c_[i] = p_.c(static_cast<std::uint64_t>(i));
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
