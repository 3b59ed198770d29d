#pragma once
// The one interface every kernel implements, and the registry that lists them.
//
// A kernel describes itself as data (its parameters with types, defaults and allowed values; its
// modes; its implementations, each tagged cpu or cuda) and, for one point, makes an Instance: the
// object the measurement loop times. Adding a kernel means a folder under kernels/ and one line in
// kernels/registry.cpp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks {

using Json = nlohmann::json;

enum class ParamType { integer, number, string, boolean };
const char* to_string(ParamType type);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  Json default_value;              // null: the parameter is required
  std::vector<Json> allowed;       // empty: any value of the type (within min and max)
  std::optional<double> min, max;  // inclusive bounds for integer and number parameters
  std::vector<Json> special;       // values accepted besides those of the type: chunk_size's "auto"
  std::string help;
};

enum class Backend { cpu, cuda };
const char* to_string(Backend backend);

struct ImplementationSpec {
  std::string name;
  Backend backend = Backend::cpu;
  std::string help;
};

struct CheckResult {
  bool passed = false;
  std::string detail;  // what was compared and how far apart it was
};

// One point's kernel, ready to run. Made once per (kernel, implementation, parameters) and reused for
// every mode of that shape, so setup (allocation, input generation, weights) is paid once.
// Errors are reported by throwing std::exception with a message that says what failed.
class Instance {
 public:
  virtual ~Instance() = default;
  // Brings the instance into the state that timing `mode` needs (a backward pass needs the forward
  // pass's saved state). Called once before a mode is timed; not timed.
  virtual void prepare(const std::string& mode) { (void)mode; }
  // One call of the kernel in `mode`. On CUDA it is enqueued on stream() and returns without waiting.
  virtual void run(const std::string& mode) = 0;
  // Work counts of one call, for TFLOP/s and GB/s.
  virtual double flops(const std::string& mode) const = 0;
  virtual double bytes(const std::string& mode) const = 0;
  // Device memory the instance holds (every allocation, library workspaces included); 0 on the CPU.
  virtual std::size_t device_bytes() const { return 0; }
  // Peak device memory seen while running, where the implementation tracks it; else device_bytes().
  virtual std::size_t device_peak_bytes() const { return device_bytes(); }
  // Compares this implementation's results with a reference at this point's shape.
  virtual CheckResult check(const std::string& mode) = 0;
  // The CUDA stream run() enqueues on (a cudaStream_t), or nullptr for CPU implementations.
  virtual void* stream() const { return nullptr; }
};

struct KernelSpec {
  std::string name;
  std::string title;  // human name, used in document titles: "Chunked distillation cosine loss"
  std::string description;
  std::vector<ParamSpec> parameters;
  std::vector<std::string> modes;
  std::vector<ImplementationSpec> implementations;
  // Checks constraints between parameters (hidden must be even, ...); returns the problem, if any,
  // as "key: what is wrong".
  std::function<std::optional<std::string>(const Json& params)> validate;
  // Makes an instance; params holds every parameter, defaults filled in.
  std::function<std::unique_ptr<Instance>(const std::string& implementation, const Json& params)> instantiate;

  const ParamSpec* parameter(const std::string& name) const;
  const ImplementationSpec* implementation(const std::string& name) const;
  bool has_mode(const std::string& mode) const;
};

class Registry {
 public:
  // The process-wide registry; main() fills it before anything reads it.
  static Registry& global();
  void add(KernelSpec spec);  // throws if the name is taken
  const KernelSpec* find(const std::string& name) const;
  const std::vector<KernelSpec>& all() const { return kernels_; }
  std::vector<std::string> names() const;

 private:
  std::vector<KernelSpec> kernels_;
};

// Registers the kernels that ship with kernelsweep (kernels/registry.cpp: one line each).
void register_builtin_kernels(Registry& registry);

}  // namespace ks
