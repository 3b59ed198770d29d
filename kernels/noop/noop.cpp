// noop: a kernel that does nothing, on the CPU. Sweeping it measures kernelsweep's own cost per
// point (scheduling, worker round trip, streaming, HDF5, documents): bench/sweep_overhead uses it.
#include <memory>

#include "kernels/kernel.h"

namespace {

ks::CheckResult nothing_to_compare() { return {true, "nothing to compare"}; }

struct NoopInstance final : ks::Instance {
  ks::BoundMode bind(const std::string&) override {
    return {[] {}, nothing_to_compare};
  }
};

}  // namespace

KS_KERNEL(noop, "No-op", "Does nothing: a sweep of it measures kernelsweep's own overhead per point.") {
  kernel.integer("id", 0, "distinguishes otherwise equal points").min(0);
  kernel.modes({"forward"});
}

KS_IMPLEMENTATION(noop, cpu, cpu, "an empty function") { return std::make_unique<NoopInstance>(); }
