#include "support/test_kernels.h"

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace ks::testing {
namespace {

void sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

// KS_TEST_SLEEP_SCALE, where set, multiplies every sleeper's run_ms: the same points timed as a slower
// (or faster) build of the kernel would time them, as the history of nightly runs sees a regression.
double sleep_scale() {
  const char* scale = std::getenv("KS_TEST_SLEEP_SCALE");
  return scale && *scale ? std::strtod(scale, nullptr) : 1.0;
}

class SleepInstance final : public Instance {
 public:
  explicit SleepInstance(const Parameters& params) : run_ms_(params.get<double>("run_ms") * sleep_scale()) {
    sleep_ms(params.get<double>("setup_ms"));
  }
  BoundMode bind(const std::string&) override {
    return {[this] { sleep_ms(run_ms_); }, [] { return CheckResult{true, "sleeps agree"}; }};
  }

 private:
  double run_ms_;
};

class CrashInstance final : public Instance {
 public:
  explicit CrashInstance(const Parameters& params) : action_(params.get<std::string>("action")) {}
  BoundMode bind(const std::string&) override {
    return {[this] { misbehave(); },
            [this] {
              if (action_ == "fail_check") return CheckResult{false, "test_crash: check fails on purpose"};
              return CheckResult{true, "ok"};
            }};
  }

 private:
  void misbehave() const {
    if (action_ == "abort") std::abort();
    if (action_ == "sigkill") std::raise(SIGKILL);
    if (action_ == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (action_ == "throw") throw std::runtime_error("test_crash: thrown on purpose");
  }
  std::string action_;
};

template <class T> ImplementationSpec implementation(std::string name, Backend backend) {
  ImplementationSpec spec;
  spec.name = std::move(name);
  spec.backend = backend;
  spec.make = [](const Parameters& p) { return std::make_unique<T>(p); };
  return spec;
}

KernelSpec named_kernel(std::string name, std::string title, std::string description) {
  KernelSpec k;
  k.name = std::move(name);
  k.title = std::move(title);
  k.description = std::move(description);
  return k;
}

KernelSpec sleep_kernel() {
  KernelSpec k = named_kernel("test_sleep", "Test sleeper", "sleeps setup_ms at setup and run_ms per call");
  KernelDeclaration kernel(k);
  kernel.integer("id", 0, "").min(0);
  kernel.number("setup_ms", 0.0, "").min(0);
  kernel.number("run_ms", 0.0, "").min(0);
  kernel.modes({"forward", "backward"});
  kernel.work([](const Parameters&, const std::string&) { return Work{1e6, 1e6}; });
  k.implementations = {implementation<SleepInstance>("cpu", Backend::cpu),
                       implementation<SleepInstance>("gpu_only", Backend::cuda)};
  return k;
}

KernelSpec crash_kernel() {
  KernelSpec k = named_kernel("test_crash", "Test crasher", "misbehaves on purpose");
  KernelDeclaration kernel(k);
  kernel.integer("id", 0, "").min(0);
  kernel.choice("action", "none", {"none", "abort", "sigkill", "hang", "throw", "fail_check"}, "");
  kernel.modes({"forward"});
  k.implementations = {implementation<CrashInstance>("cpu", Backend::cpu)};
  return k;
}

// The sleeper with a work model that claims what the test says: a possible figure or an impossible one.
KernelSpec claim_kernel() {
  KernelSpec k = sleep_kernel();
  k.name = "test_claim";
  k.title = "Test claimant";
  k.description = "sleeps run_ms per call and declares claimed_gb GB moved a call";
  KernelDeclaration kernel(k);
  kernel.number("claimed_gb", 0.0, "").min(0);
  kernel.work([](const Parameters& p, const std::string&) { return Work{0, p.get<double>("claimed_gb") * 1e9}; });
  k.implementations.resize(1);  // cpu
  return k;
}

}  // namespace

void register_test_kernels(Registry& registry) {
  registry.add(sleep_kernel());
  registry.add(crash_kernel());
  registry.add(claim_kernel());
}

}  // namespace ks::testing
