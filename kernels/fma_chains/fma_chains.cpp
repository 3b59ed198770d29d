// fma_chains: the peak arithmetic rate of a CPU, for the rooflines of kernelsweep calibrate:
// independent chains of fused multiply-adds, x = x·a + b, on every core this process may use, in the
// widest vector instructions the processor has (the loop is compiled for AVX-512, AVX2 with FMA and
// plain x86-64, and the processor picks; kernels/CMakeLists.txt lets the compiler fuse x·a + b into
// one instruction). 2 FLOPs a step of a chain; no memory is read or written.
// Each thread keeps 512 bytes of chains in flight (8 AVX-512 registers, 16 of AVX2): enough to hide
// the FMA units' latency.
#include <cmath>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/cores.h"
#include "kernels/kernel.h"

namespace ks::fma_chains {
namespace {

// Each thread's chains: 8 vectors of 64 bytes, 512 bytes.
constexpr int kVectors = 8;
template <class T> constexpr int kChains = kVectors * 64 / sizeof(T);

// The chains' constants: each step moves x towards b / (1 − a), which a check recomputes.
template <class T> constexpr T kA = static_cast<T>(0.9990234375);  // 1 − 2⁻¹⁰, exact in both types
template <class T> constexpr T kB = static_cast<T>(0.0009765625);  // 2⁻¹⁰: the chains converge to 1

struct Problem {
  bool fp64 = false;
  std::int64_t iterations = 0;
  int threads = 1;

  explicit Problem(const Parameters& p)
      : fp64(p.is("dtype", "fp64")),
        iterations(p.get<std::int64_t>("iterations")),
        threads(p.get<int>("threads") > 0 ? p.get<int>("threads") : usable_cores()) {}
};

// GCC's vector types: 64 bytes of lanes, whole registers of whichever width a clone is compiled for.
typedef float Floats __attribute__((vector_size(64)));
typedef double Doubles __attribute__((vector_size(64)));

// One thread's chains, `iterations` steps each; returns their mean, so that the work is kept. Inlined
// into each clone below, so that every clone compiles it for its own instructions.
template <class T> [[gnu::always_inline]] inline T run_chains(std::int64_t iterations) {
  using Vector = std::conditional_t<std::is_same_v<T, float>, Floats, Doubles>;
  Vector x[kVectors];
  for (int v = 0; v < kVectors; ++v) x[v] = Vector{} + static_cast<T>(v) / kVectors;
  const Vector a = Vector{} + kA<T>, b = Vector{} + kB<T>;
  for (std::int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int v = 0; v < kVectors; ++v) x[v] = x[v] * a + b;
  T sum = 0;
  for (int v = 0; v < kVectors; ++v)
    for (int lane = 0; lane < static_cast<int>(64 / sizeof(T)); ++lane) sum += x[v][lane];
  return sum / kChains<T>;
}

__attribute__((target_clones("avx512f", "arch=haswell", "default"))) float chains_fp32(std::int64_t iterations) {
  return run_chains<float>(iterations);
}
__attribute__((target_clones("avx512f", "arch=haswell", "default"))) double chains_fp64(std::int64_t iterations) {
  return run_chains<double>(iterations);
}

class CpuChains final : public Instance {
 public:
  explicit CpuChains(const Parameters& params) : p_(params), means_(static_cast<std::size_t>(p_.threads)) {}

  BoundMode bind(const std::string&) override {
    return run_then_compare([this] { call(); }, [this] { return check(); });
  }

 private:
  void call() {
    const auto one = [this](int t) {
      means_[static_cast<std::size_t>(t)] = p_.fp64 ? chains_fp64(p_.iterations) : chains_fp32(p_.iterations);
    };
    std::vector<std::thread> others;
    for (int t = 1; t < p_.threads; ++t) others.emplace_back(one, t);
    one(0);
    for (std::thread& thread : others) thread.join();
  }

  // Every thread's chains end where the recurrence takes them: 1 − (1 − x₀)·aⁿ, each x₀ in [0, 1).
  CheckResult check() const {
    const double a = p_.fp64 ? kA<double> : kA<float>;
    const double remaining = std::pow(a, static_cast<double>(p_.iterations));  // of each chain's distance to 1
    double worst = 0;
    for (const double mean : means_) {
      // The chains start at v / kVectors for the vector v they are in: their mean distance to 1 is
      // (1 + 1/kVectors) / 2.
      const double expected = 1.0 - remaining * (1.0 + 1.0 / kVectors) / 2.0;
      const double error = std::abs(mean - expected);
      if (!(error <= worst)) worst = error;
    }
    const double tolerance = p_.fp64 ? 1e-9 : 1e-3;
    return {worst <= tolerance,
            fmt::format("the chains' means on {} threads against the recurrence's limit: largest difference {:.3g} "
                        "(tolerance {:g})",
                        p_.threads, worst, tolerance)};
  }

  Problem p_;
  std::vector<double> means_;
};

}  // namespace
}  // namespace ks::fma_chains

KS_KERNEL(fma_chains, "Peak FMA rate of a CPU",
          "independent chains of fused multiply-adds on every usable core, in the widest vector instructions the "
          "processor has: the FLOP/s a CPU reaches (kernelsweep calibrate measures a CPU's rates so)") {
  kernel.choice("dtype", "fp32", {"fp32", "fp64"}, "element type");
  kernel.integer("iterations", 1 << 22, "steps of every chain a call").min(1);
  kernel.integer("threads", 0, "threads a call; 0: every core this process may use").min(0);
  kernel.modes({"forward"});
  kernel.work([](const ks::Parameters& params, const std::string&) {
    const ks::fma_chains::Problem p(params);
    const double chains = p.fp64 ? ks::fma_chains::kChains<double> : ks::fma_chains::kChains<float>;
    return ks::Work{2.0 * static_cast<double>(p.iterations) * p.threads * chains, 0.0};
  });
}

KS_IMPLEMENTATION(fma_chains, cpu, cpu, "vector FMA chains in registers, one thread per usable core") {
  return std::make_unique<ks::fma_chains::CpuChains>(params);
}
