// A plugin whose kernel misbehaves on purpose: each call does `action` (none, abort, throw). A sweep
// of it must lose the misbehaving points only, as with any kernel.
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/kernel.h"

namespace {

class Misbehaving final : public ks::Instance {
 public:
  explicit Misbehaving(const ks::Parameters& params) : action_(params.get<std::string>("action")) {}
  ks::BoundMode bind(const std::string&) override {
    return {[this] { act(); }, [] { return ks::CheckResult{true, "nothing to compare"}; }};
  }

 private:
  void act() const {
    if (action_ == "abort") std::abort();
    if (action_ == "throw") throw std::runtime_error("test_plugin_misbehaving: thrown on purpose");
  }
  std::string action_;
};

}  // namespace

KS_KERNEL(test_plugin_misbehaving, "Misbehaving", "aborts or throws on purpose") {
  kernel.choice("action", "none", {"none", "abort", "throw"}, "what each call does");
  kernel.modes({"forward"});
}

KS_IMPLEMENTATION(test_plugin_misbehaving, cpu, cpu, "does its action") {
  return std::make_unique<Misbehaving>(params);
}
