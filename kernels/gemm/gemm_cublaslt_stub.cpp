// Without CUDA the cublaslt and cublas implementations still exist in the schema (a sweep file that names it
// stays valid everywhere), but making an instance says why it cannot run here.
#ifndef KERNELSWEEP_HAVE_CUDA
#include <stdexcept>

#include "kernels/gemm/gemm.h"

namespace ks::gemm {

std::unique_ptr<Instance> make_cublaslt_instance(const Params& p) {
  (void)p;
  throw std::runtime_error("gemm: implementation cublaslt: kernelsweep was built without CUDA");
}

std::unique_ptr<Instance> make_cublas_instance(const Params& p) {
  (void)p;
  throw std::runtime_error("gemm: implementation cublas: kernelsweep was built without CUDA");
}

}  // namespace ks::gemm
#endif
