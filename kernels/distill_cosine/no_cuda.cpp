// Without CUDA the fused and naive implementations still exist in the schema (a sweep file that names
// them stays valid everywhere), but making an instance says why it cannot run here.
#ifndef KERNELSWEEP_HAVE_CUDA
#include <stdexcept>

#include "kernels/distill_cosine/cuda_distill.h"

namespace ks::distill {
namespace {

[[noreturn]] void without_cuda(const char* what) {
  throw std::runtime_error(std::string("distill_cosine: ") + what + ": kernelsweep was built without CUDA");
}

}  // namespace

std::unique_ptr<Instance> make_fused_instance(const Params&) { without_cuda("implementation fused"); }
std::unique_ptr<Instance> make_naive_instance(const Params&) { without_cuda("implementation naive"); }
std::unique_ptr<Instance> make_fused_instance(const Params&, const FusedOptions&) {
  without_cuda("implementation fused");
}
std::unique_ptr<Instance> make_gemm_floor_instance(const Params&) { without_cuda("the GEMM floor"); }
std::unique_ptr<Instance> make_row_pass_instance(const Params&, const FusedOptions&) {
  without_cuda("the row kernel alone");
}
Inputs download_inputs(Instance&) { without_cuda("download_inputs"); }

}  // namespace ks::distill
#endif
