// axpy's `cpu` implementation: the elements split over the hardware threads; bf16 stored as its raw
// 16 bits, so that it moves half the bytes fp32 does.
#include <cstdint>
#include <memory>
#include <vector>

#include "axpy.h"
#include "kernels/common/cpu.h"

namespace axpy {
namespace {

// A thread for fewer elements than this is not worth starting.
constexpr std::int64_t kMinPerThread = 1 << 16;

inline float load(float value) { return value; }
inline float load(std::uint16_t bits) { return ks::bf16_bits_to_float(bits); }
inline void store(float& out, float value) { out = value; }
inline void store(std::uint16_t& out, float value) { out = ks::float_to_bf16_bits(value); }

// Element is float (fp32) or std::uint16_t (the bits of a bf16).
template <typename Element> class CpuAxpy final : public ks::Instance {
 public:
  explicit CpuAxpy(const ks::Parameters& params) : s_(params), x_(static_cast<std::size_t>(s_.n)), y_(x_.size()) {
    generate(x_, kX);
    generate(y_, kY);
  }

  // Every call adds alpha·x to y once more; the check starts again from the generated y.
  ks::BoundMode bind(const std::string&) override {
    return {[this] { run(); },
            [this] {
              generate(y_, kY);
              run();
              std::vector<float> y(y_.size());
              for (std::size_t i = 0; i < y.size(); ++i) y[i] = load(y_[i]);
              return check(s_, y.data());
            }};
  }

 private:
  void run() {
    const float alpha = s_.alpha;
    Element* y = y_.data();
    const Element* x = x_.data();
    ks::parallel_for(
        s_.n,
        [=](std::int64_t begin, std::int64_t end) {
          for (std::int64_t i = begin; i < end; ++i) store(y[i], alpha * load(x[i]) + load(y[i]));
        },
        kMinPerThread);
  }

  void generate(std::vector<Element>& values, Tensor tensor) const {
    for (std::int64_t i = 0; i < s_.n; ++i) store(values[static_cast<std::size_t>(i)], input(s_, tensor, i));
  }

  Shape s_;
  std::vector<Element> x_, y_;
};

}  // namespace
}  // namespace axpy

KS_IMPLEMENTATION(axpy, cpu, cpu, "a loop over the elements, split over the hardware threads") {
  if (params.is("dtype", "bf16")) return std::make_unique<axpy::CpuAxpy<std::uint16_t>>(params);
  return std::make_unique<axpy::CpuAxpy<float>>(params);
}
