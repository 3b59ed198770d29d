#pragma once
// The CUDA side of distill_cosine as the benchmark and the GPU tests see it: plain C++ (no CUDA
// types), so that bench/ and tests/ compile with or without CUDA. Without CUDA every function here
// throws "built without CUDA" (no_cuda.cpp).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/distill_cosine/distill_cosine.h"

namespace ks::distill {

// How the fused implementation reads a row of logits for its statistics and its gradient.
enum class RowKernel {
  automatic,  // cluster where the device and the shape allow it, else two_pass
  two_pass,   // one block per row, reading s and t twice from memory (any GPU)
  cluster,    // a cluster of blocks per row keeps the row in shared memory: one read (sm_90)
};
inline const char* to_string(RowKernel kernel) {
  switch (kernel) {
    case RowKernel::automatic: return "auto";
    case RowKernel::two_pass: return "two-pass";
    case RowKernel::cluster: return "cluster";
  }
  return "?";
}

// Throws on an unknown name.
inline RowKernel row_kernel_from_string(const std::string& name) {
  for (RowKernel k : {RowKernel::automatic, RowKernel::two_pass, RowKernel::cluster})
    if (name == to_string(k)) return k;
  throw std::invalid_argument("distill_cosine: unknown row kernel '" + name + "' (auto, two-pass, cluster)");
}

struct FusedOptions {
  RowKernel row_kernel = RowKernel::automatic;
};

std::unique_ptr<Instance> make_fused_instance(const Params& p, const FusedOptions& options);

// The tokens per chunk the fused implementation uses for `p` (resolves chunk_size 0, "auto").
std::int64_t fused_chunk_size(const Params& p);

// The floor: the four matrix products of a full pass (s, t, dXs, dWs), unchunked, with cuBLASLt on
// the same inputs and dtypes as the fused implementation. Its run() times them back to back in any
// mode; check() compares nothing.
std::unique_ptr<Instance> make_gemm_floor_instance(const Params& p);

// The inputs as the device generated them, copied back (bf16 values held as float): the GPU tests
// compare them bit for bit with make_inputs(). `instance` must come from make_fused_instance or
// make_naive_instance.
Inputs download_inputs(Instance& instance);

}  // namespace ks::distill
