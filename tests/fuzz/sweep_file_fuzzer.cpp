// libFuzzer target: any bytes as a sweep file, through the parser and the planner, as `validate` and
// `plan` take them. A sweep file may be refused (SweepFileError, PlanError) but never crash, hang
// or exhaust memory; the sanitizers (address, undefined) turn any memory or arithmetic fault into a
// finding. tests/fuzz/corpus holds the seeds: real sweep files and every reproducer found.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/parse.h"
#include "kernels/kernel.h"
#include "plan/plan.h"

namespace {

const ks::Registry& registry() {
  static const ks::Registry kernels = [] {
    ks::Registry r;
    ks::register_builtin_kernels(r);
    return r;
  }();
  return kernels;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ks::SweepSpec spec = ks::parse_sweep_text(text, "fuzz.yaml", registry());
    ks::PlanOptions options;
    options.max_points = 10000;  // plans larger than this are refused before they are expanded
    ks::make_plan(spec, registry(), options);
  } catch (const ks::SweepFileError&) {
  } catch (const ks::PlanError&) {}
  return 0;
}
