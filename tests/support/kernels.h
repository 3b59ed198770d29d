#pragma once
// The built-in kernels as the tests use them, and the skip of GPU tests on machines without a GPU.
#include <string>

#include "env/environment.h"
#include "kernels/kernel.h"

namespace ks::testing {

// The registry of the built-in kernels, filled once per test program.
const Registry& builtin_registry();

// A built-in kernel by name; aborts the test program when there is none.
const KernelSpec& builtin_kernel(const std::string& name);

}  // namespace ks::testing

// In a GPU test: skip it where no CUDA GPU is visible.
#define SKIP_WITHOUT_GPU() \
  if (::ks::visible_gpu_count() == 0) GTEST_SKIP() << "no CUDA GPU here"
