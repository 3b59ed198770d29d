// axpy's declaration and its check; the implementations live in cpu.cpp and cuda.cu.
#include "axpy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace axpy {

ks::CheckResult check(const Shape& s, const float* y) {
  const double tolerance = s.bf16 ? 0x1p-7 : 0x1p-22;
  double worst = 0;
  std::int64_t worst_at = 0;
  for (std::int64_t i = 0; i < s.n; ++i) {
    const double a_x = static_cast<double>(s.alpha) * input(s, kX, i);
    const double y0 = input(s, kY, i);
    const double exact = a_x + y0;
    // A NaN compares false with everything, so it is caught explicitly.
    const double error = std::isfinite(y[i]) ? std::fabs(y[i] - exact) / std::max(std::fabs(a_x) + std::fabs(y0), 1e-30)
                                             : std::numeric_limits<double>::infinity();
    if (!(error <= worst)) {
      worst = error;
      worst_at = i;
    }
  }
  std::ostringstream detail;
  detail << "axpy n=" << s.n << (s.bf16 ? " bf16" : " fp32") << ": every element vs double; worst error " << worst
         << " (|got-exact|/(|a*x|+|y|), tolerance " << tolerance << ") at y[" << worst_at << "]";
  return {worst <= tolerance, detail.str()};
}

}  // namespace axpy

KS_KERNEL(axpy, "AXPY", "y = alpha·x + y over n elements (BLAS axpy); fp32, or bf16 storage with fp32 arithmetic") {
  kernel.integer("n", 1 << 24, "elements of x and y").min(1);
  kernel.choice("dtype", "fp32", {"fp32", "bf16"}, "element type of x and y (arithmetic in fp32)");
  kernel.number("alpha", 2.0, "the scalar a");
  kernel.integer("seed", 0, "seed of the generated inputs").min(0);
  kernel.modes({"forward"});
  // Two FLOPs per element; x read, y read and written once.
  kernel.work([](const ks::Parameters& p, const std::string&) {
    const axpy::Shape s(p);
    return ks::Work{2.0 * static_cast<double>(s.n),
                    3.0 * static_cast<double>(s.n) * static_cast<double>(s.element_size())};
  });
}
