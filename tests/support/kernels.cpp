#include "support/kernels.h"

#include <cstdio>
#include <cstdlib>

namespace ks::testing {

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    register_builtin_kernels(r);
    return r;
  }();
  return registry;
}

const KernelSpec& builtin_kernel(const std::string& name) {
  const KernelSpec* kernel = builtin_registry().find(name);
  if (!kernel) {
    std::fprintf(stderr, "no built-in kernel %s\n", name.c_str());
    std::abort();
  }
  return *kernel;
}

}  // namespace ks::testing
