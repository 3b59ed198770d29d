// A plugin that loads: kernel test_plugin_square (y = x·x on the CPU), and an implementation of the
// built-in kernel noop.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace {

class Square final : public ks::Instance {
 public:
  explicit Square(const ks::Parameters& params) : x_(static_cast<std::size_t>(params.get<std::int64_t>("n"))) {
    for (std::size_t i = 0; i < x_.size(); ++i) x_[i] = 0.5f * static_cast<float>(i);
    y_.resize(x_.size());
  }
  ks::BoundMode bind(const std::string&) override {
    return {[this] { run(); },
            [this] {
              run();
              for (std::size_t i = 0; i < x_.size(); ++i)
                if (y_[i] != x_[i] * x_[i]) return ks::CheckResult{false, "y[" + std::to_string(i) + "] is wrong"};
              return ks::CheckResult{true, "every element equals x*x"};
            }};
  }

 private:
  void run() {
    for (std::size_t i = 0; i < x_.size(); ++i) y_[i] = x_[i] * x_[i];
  }
  std::vector<float> x_, y_;
};

class Nothing final : public ks::Instance {
 public:
  ks::BoundMode bind(const std::string&) override {
    return {[] {}, [] { return ks::CheckResult{true, "nothing to compare"}; }};
  }
};

}  // namespace

KS_KERNEL(test_plugin_square, "Square", "y = x·x, elementwise") {
  kernel.integer("n", 16, "elements").min(1);
  kernel.modes({"forward"});
}

KS_IMPLEMENTATION(test_plugin_square, cpu, cpu, "a loop") { return std::make_unique<Square>(params); }

KS_IMPLEMENTATION(noop, from_plugin, cpu, "an empty function, from a plugin") { return std::make_unique<Nothing>(); }
