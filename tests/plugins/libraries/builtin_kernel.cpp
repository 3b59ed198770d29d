// A plugin that declares a kernel named like a built-in one (gemm), beside one of its own: refused
// whole, so its own kernel must not appear either.
#include <memory>
#include <stdexcept>

#include "kernels/kernel.h"

KS_KERNEL(gemm, "Another gemm", "a kernel whose name is taken") { kernel.modes({"forward"}); }

KS_KERNEL(test_plugin_refused_kernel, "Refused", "registered only if the whole plugin is") {
  kernel.modes({"forward"});
}

KS_IMPLEMENTATION(test_plugin_refused_kernel, cpu, cpu, "never made") { throw std::logic_error("never made"); }
