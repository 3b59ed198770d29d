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

class SleepInstance final : public Instance {
 public:
  explicit SleepInstance(const Json& params) : run_ms_(params.at("run_ms").get<double>()) {
    sleep_ms(params.at("setup_ms").get<double>());
  }
  void run(const std::string&) override { sleep_ms(run_ms_); }
  double flops(const std::string&) const override { return 1e6; }
  double bytes(const std::string&) const override { return 1e6; }
  CheckResult check(const std::string&) override { return {true, "sleeps agree"}; }

 private:
  double run_ms_;
};

class CrashInstance final : public Instance {
 public:
  explicit CrashInstance(const Json& params) : action_(params.at("action").get<std::string>()) {}
  void run(const std::string&) override {
    if (action_ == "abort") std::abort();
    if (action_ == "sigkill") std::raise(SIGKILL);
    if (action_ == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (action_ == "throw") throw std::runtime_error("test_crash: thrown on purpose");
  }
  double flops(const std::string&) const override { return 0; }
  double bytes(const std::string&) const override { return 0; }
  CheckResult check(const std::string&) override {
    if (action_ == "fail_check") return {false, "test_crash: check fails on purpose"};
    return {true, "ok"};
  }

 private:
  std::string action_;
};

ParamSpec integer_param(const std::string& name) { return {name, ParamType::integer, 0, {}, 0.0, {}, {}, ""}; }
ParamSpec number_param(const std::string& name) { return {name, ParamType::number, 0.0, {}, 0.0, {}, {}, ""}; }

KernelSpec sleep_kernel() {
  KernelSpec k;
  k.name = "test_sleep";
  k.title = "Test sleeper";
  k.description = "sleeps setup_ms at setup and run_ms per call";
  k.parameters = {integer_param("id"), number_param("setup_ms"), number_param("run_ms")};
  k.modes = {"forward", "backward"};
  k.implementations = {{"cpu", Backend::cpu, ""}, {"gpu_only", Backend::cuda, ""}};
  k.instantiate = [](const std::string&, const Json& p) -> std::unique_ptr<Instance> {
    return std::make_unique<SleepInstance>(p);
  };
  return k;
}

KernelSpec crash_kernel() {
  KernelSpec k;
  k.name = "test_crash";
  k.title = "Test crasher";
  k.description = "misbehaves on purpose";
  ParamSpec action{"action", ParamType::string, "none", {"none", "abort", "sigkill", "hang", "throw", "fail_check"},
                   {}, {}, {}, ""};
  k.parameters = {integer_param("id"), action};
  k.modes = {"forward"};
  k.implementations = {{"cpu", Backend::cpu, ""}};
  k.instantiate = [](const std::string&, const Json& p) -> std::unique_ptr<Instance> {
    return std::make_unique<CrashInstance>(p);
  };
  return k;
}

}  // namespace

void register_test_kernels(Registry& registry) {
  registry.add(sleep_kernel());
  registry.add(crash_kernel());
}

}  // namespace ks::testing
