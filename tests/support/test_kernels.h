#pragma once
// Kernels that exist only in tests, registered in kernelsweep-test (and its workers):
//   test_sleep: setup sleeps setup_ms, each call sleeps run_ms (points of chosen durations);
//               implementation `cpu`, and `gpu_only` (tagged cuda: skipped on ranks without a GPU).
//   test_crash: each call does `action`: none, abort, sigkill, hang, throw; or fail_check.
#include "kernels/kernel.h"

namespace ks::testing {

void register_test_kernels(Registry& registry);

}  // namespace ks::testing
