// peak_flops's declaration and work counts; its implementation is cuda.cu.
#include "kernels/peak_flops/peak_flops.h"

namespace ks::peak_flops {
namespace {

Dtype dtype_named(const std::string& name) {
  if (name == "fp64") return Dtype::fp64;
  if (name == "tf32") return Dtype::tf32;
  if (name == "bf16") return Dtype::bf16;
  if (name == "fp16") return Dtype::fp16;
  if (name == "fp8") return Dtype::fp8;
  return Dtype::fp32;
}

}  // namespace

Problem::Problem(const Parameters& p)
    : dtype(dtype_named(p.get<std::string>("dtype"))),
      dtype_name(p.get<std::string>("dtype")),
      size(p.get<std::int64_t>("size")),
      seed(p.get<std::uint64_t>("seed")) {}

std::int64_t input_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp64: return 8;
    case Dtype::fp32:
    case Dtype::tf32: return 4;
    case Dtype::bf16:
    case Dtype::fp16: return 2;
    case Dtype::fp8: return 1;
  }
  return 4;
}

std::int64_t output_bytes(Dtype dtype) { return dtype == Dtype::fp8 ? 2 : input_bytes(dtype); }

Work work(const Problem& p) {
  const double n = static_cast<double>(p.size);
  return {2.0 * n * n * n, n * n * static_cast<double>(2 * input_bytes(p.dtype) + output_bytes(p.dtype))};
}

}  // namespace ks::peak_flops

KS_KERNEL(peak_flops, "Peak matrix-multiply rate",
          "one size³ matrix product through cuBLASLt in the dtype's arithmetic: the FLOP/s a GPU reaches "
          "(kernelsweep calibrate measures a GPU's rates so)") {
  kernel.choice("dtype", "bf16", {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8"},
                "the arithmetic (fp8: e4m3, from compute capability 8.9)");
  kernel.integer("size", 8192, "side of the square matrices").min(16).max(65536);
  kernel.integer("seed", 0, "seed of the generated matrices").min(0);
  kernel.modes({"forward"});
  kernel.work(
      [](const ks::Parameters& p, const std::string&) { return ks::peak_flops::work(ks::peak_flops::Problem(p)); });
}
