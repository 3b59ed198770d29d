// peak_flops's declaration and work counts; its implementation is cuda.cu.
#include "kernels/peak_flops/peak_flops.h"

#include <algorithm>
#include <iterator>

namespace ks::peak_flops {
namespace {

// In Dtype's order: each dtype's name, and the bytes of one element of A and B.
constexpr const char* kDtypeNames[] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8"};
constexpr std::int64_t kInputBytes[] = {8, 4, 4, 2, 2, 1};

Dtype dtype_named(const std::string& name) {
  const auto found = std::find(std::begin(kDtypeNames), std::end(kDtypeNames), name);
  return found == std::end(kDtypeNames) ? Dtype::fp32 : static_cast<Dtype>(found - std::begin(kDtypeNames));
}

}  // namespace

Problem::Problem(const Parameters& p)
    : dtype(dtype_named(p.get<std::string>("dtype"))),
      dtype_name(p.get<std::string>("dtype")),
      size(p.get<std::int64_t>("size")),
      seed(p.get<std::uint64_t>("seed")) {}

std::int64_t input_bytes(Dtype dtype) { return kInputBytes[static_cast<std::size_t>(dtype)]; }

std::int64_t output_bytes(Dtype dtype) { return dtype == Dtype::fp8 ? 2 : input_bytes(dtype); }

Work work(const Problem& p) {
  const double n = static_cast<double>(p.size);
  return {2.0 * n * n * n, n * n * static_cast<double>(2 * input_bytes(p.dtype) + output_bytes(p.dtype))};
}

}  // namespace ks::peak_flops

KS_KERNEL(peak_flops, "Peak matrix-multiply rate",
          "one size³ matrix product through cuBLASLt in the dtype's arithmetic: the FLOP/s a GPU reaches "
          "(kernelsweep calibrate measures a GPU's rates so)") {
  kernel.choice("dtype", "bf16", {std::begin(ks::peak_flops::kDtypeNames), std::end(ks::peak_flops::kDtypeNames)},
                "the arithmetic (fp8: e4m3, from compute capability 8.9)");
  kernel.integer("size", 8192, "side of the square matrices").min(16).max(65536);
  kernel.integer("seed", 0, "seed of the generated matrices").min(0);
  kernel.modes({"forward"});
  kernel.work(
      [](const ks::Parameters& p, const std::string&) { return ks::peak_flops::work(ks::peak_flops::Problem(p)); });
}
