// noop: a kernel that does nothing, on the CPU. Sweeping it measures kernelsweep's own cost per
// point (scheduling, worker round trip, streaming, HDF5, documents): bench/sweep_overhead uses it.
#include "kernels/kernel.h"

namespace ks {
namespace {

class NoopInstance final : public Instance {
 public:
  void run(const std::string&) override {}
  double flops(const std::string&) const override { return 0; }
  double bytes(const std::string&) const override { return 0; }
  CheckResult check(const std::string&) override { return {true, "nothing to compare"}; }
};

}  // namespace

KernelSpec make_noop_kernel() {
  KernelSpec spec;
  spec.name = "noop";
  spec.title = "No-op";
  spec.description = "Does nothing: a sweep of it measures kernelsweep's own overhead per point.";
  spec.parameters = {{"id", ParamType::integer, 0, {}, 0.0, {}, {}, "distinguishes otherwise equal points"}};
  spec.modes = {"forward"};
  spec.implementations = {{"cpu", Backend::cpu, "an empty function"}};
  spec.instantiate = [](const std::string&, const Json&) -> std::unique_ptr<Instance> {
    return std::make_unique<NoopInstance>();
  };
  return spec;
}

}  // namespace ks
