// stream's declaration, work counts and sampled check; each implementation lives in a file of its
// own (cpu.cpp, cuda.cu).
#include "kernels/stream/stream.h"

#include <cmath>

#include <fmt/format.h>

namespace ks::stream {

constexpr int kSampled = 64;  // elements of a that a check compares

Problem::Problem(const Parameters& p)
    : op(p.is("op", "copy") ? Op::copy : Op::triad),
      elements(p.get<std::int64_t>("mib") << 18),
      seed(p.get<std::uint64_t>("seed")) {}

Work work(const Problem& p) {
  const double n = static_cast<double>(p.elements);
  return p.op == Op::copy ? Work{0.0, 2.0 * n * sizeof(float)} : Work{2.0 * n, 3.0 * n * sizeof(float)};
}

CheckResult check_sampled(const Problem& p, const std::function<float(std::int64_t)>& a) {
  double worst = 0;
  std::int64_t worst_index = 0;
  for (int s = 0; s < kSampled; ++s) {
    const std::int64_t i = s == 0   ? 0
                           : s == 1 ? p.elements - 1
                                    : static_cast<std::int64_t>(counter_uniform(p.seed, 3, s) * p.elements);
    const auto u = static_cast<std::uint64_t>(i);
    // Either order of rounding (a fused multiply-add, or a product then a sum) is within 1e-6.
    const double expected =
        p.op == Op::copy ? p.b(u) : static_cast<double>(p.b(u)) + kScalar * static_cast<double>(p.c(u));
    const double error = std::abs(static_cast<double>(a(i)) - expected);
    if (!(error <= worst)) worst = error, worst_index = i;  // a NaN is the worst there is
  }
  const bool passed = worst <= 1e-6;
  return {passed, fmt::format("{} sampled elements of a, largest difference {:.3g} at element {}", kSampled, worst,
                              worst_index)};
}

}  // namespace ks::stream

KS_KERNEL(stream, "STREAM memory bandwidth",
          "copy a[i] = b[i], or triad a[i] = b[i] + 3·c[i], over fp32 arrays of `mib` MiB each: the memory "
          "bandwidth a device sustains (kernelsweep calibrate measures it so)") {
  kernel.choice("op", "triad", {"copy", "triad"}, "copy: 2 arrays a call; triad: 3 arrays and 2 FLOPs an element");
  kernel.integer("mib", 1024, "MiB of each array: far larger than the last-level cache").min(1).max(1 << 20);
  kernel.integer("seed", 0, "seed of the generated b and c").min(0);
  kernel.modes({"forward"});
  kernel.work([](const ks::Parameters& p, const std::string&) { return ks::stream::work(ks::stream::Problem(p)); });
}
