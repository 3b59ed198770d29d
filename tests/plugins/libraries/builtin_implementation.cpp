// A plugin that adds an implementation named like one the built-in kernel gemm has (cpu), beside a
// kernel of its own: refused whole, so its own kernel must not appear either.
#include <memory>
#include <stdexcept>

#include "kernels/kernel.h"

KS_IMPLEMENTATION(gemm, cpu, cpu, "an implementation whose name is taken") { throw std::logic_error("never made"); }

KS_KERNEL(test_plugin_refused_implementation, "Refused", "registered only if the whole plugin is") {
  kernel.modes({"forward"});
}
