#pragma once
// The kernel API: what a kernel declares, what an implementation makes for one point, and how both
// are registered. The same header serves the kernels built into kernelsweep and plugins built
// against an installed kernelsweep (find_package(kernelsweep)); it is header-only, so a plugin links
// no kernelsweep library.
//
// A kernel is declared once, in one file:
//
//   KS_KERNEL(rms_norm, "RMSNorm", "y = x / rms(x) · (offset + w)") {
//     kernel.integer("tokens", 4096, "rows").min(1);
//     kernel.choice("dtype", "bf16", {"bf16", "fp32"}, "element type");
//     kernel.modes({"forward", "backward", "full"});
//     kernel.work([](const Parameters& p, const std::string& mode) { return Work{flops, bytes}; });
//   }
//
// and each implementation in a file of its own:
//
//   KS_IMPLEMENTATION(rms_norm, cpu, cpu, "float loops over rows") {
//     return std::make_unique<CpuRmsNorm>(params);   // params: const ks::Parameters&
//   }
//
// An Instance is made once per shape (every mode of it shares the setup); bind(mode) returns what
// the timing loop calls for that mode.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks {

using Json = nlohmann::json;

// Bumped whenever a type of this header changes its layout or meaning: kernelsweep refuses a plugin
// built against another version.
inline constexpr int kKernelApiVersion = 3;

// ---- parameters ----------------------------------------------------------------------------------

enum class ParamType { integer, number, string, boolean };

inline const char* to_string(ParamType type) {
  switch (type) {
    case ParamType::integer: return "integer";
    case ParamType::number: return "number";
    case ParamType::string: return "string";
    case ParamType::boolean: return "boolean";
  }
  return "?";
}

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  Json default_value;              // null: the parameter is required
  std::vector<Json> allowed;       // empty: any value of the type (within min and max)
  std::optional<double> min, max;  // inclusive bounds of integer and number parameters
  std::vector<Json> special;       // values accepted besides those of the type: chunk_size's "auto"
  std::string help;

  // Why `value` is not a value of this parameter, or nothing when it is.
  std::optional<std::string> problem_with(const Json& value) const {
    for (const Json& s : special)
      if (s == value) return std::nullopt;
    const bool typed = type == ParamType::integer  ? value.is_number_integer()
                       : type == ParamType::number ? value.is_number()
                       : type == ParamType::string ? value.is_string()
                                                   : value.is_boolean();
    if (!typed) return name + ": expected " + to_string(type) + ", got " + value.dump();
    if (value.is_number()) {
      const double number = value.get<double>();
      if (min && number < *min) return name + ": " + value.dump() + " is below the minimum " + Json(*min).dump();
      if (max && number > *max) return name + ": " + value.dump() + " is above the maximum " + Json(*max).dump();
    }
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), value) == allowed.end())
      return name + ": " + value.dump() + " is not one of " + Json(allowed).dump();
    return std::nullopt;
  }
};

// The parameters of one point: every parameter of its kernel, defaults filled in, read through typed
// accessors. get<T> takes std::int64_t, std::uint64_t, int, double, bool or std::string, and throws
// std::invalid_argument naming the parameter when it is missing or of another type.
class Parameters {
 public:
  Parameters() : values_(Json::object()) {}
  explicit Parameters(Json values) : values_(std::move(values)) {}

  template <class T> T get(std::string_view name) const {
    const Json& value = json(name);
    if constexpr (std::is_same_v<T, bool>) {
      if (value.is_boolean()) return value.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      if (value.is_number_integer() && (std::is_signed_v<T> || value.get<std::int64_t>() >= 0)) return value.get<T>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (value.is_number()) return value.get<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (value.is_string()) return value.get<std::string>();
    } else {
      static_assert(sizeof(T) == 0, "Parameters::get<T>: T must be an integer, double, bool or std::string");
    }
    throw std::invalid_argument("parameter " + std::string(name) + ": " + value.dump() +
                                " is not of the type asked for");
  }

  // True when the parameter holds exactly `value` (a special value such as "auto", or any other).
  bool is(std::string_view name, const Json& value) const { return json(name) == value; }

  // One parameter as JSON; throws std::invalid_argument when the point has no such parameter.
  const Json& json(std::string_view name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) throw std::invalid_argument("no parameter " + std::string(name));
    return *it;
  }
  // Every parameter, as one JSON object.
  const Json& json() const { return values_; }

 private:
  Json values_;
};

// ---- what an implementation gives ----------------------------------------------------------------

// cpu and cuda: where the implementation runs. any: a Python implementation that runs on the rank's
// GPU where it has one, and on the CPU otherwise (torch code written for either device).
enum class Backend { cpu, cuda, any };
inline const char* to_string(Backend backend) {
  return backend == Backend::cuda ? "cuda" : backend == Backend::any ? "any" : "cpu";
}

struct CheckResult {
  bool passed = false;
  std::string detail;  // what was compared and how far apart it was
};

// Work of one call in one mode, for TFLOP/s and GB/s.
struct Work {
  double flops = 0;
  double bytes = 0;
};

// One mode of an instance, bound: what the timing loop calls. run() is one call of the kernel (on
// CUDA, enqueued on the instance's stream, returning without waiting); check() runs the mode once
// more and compares its results with a reference.
struct BoundMode {
  std::function<void()> run;
  std::function<CheckResult()> check;
};

// The usual BoundMode: `run`, and a check that runs it once more, then compares what it made.
inline BoundMode run_then_compare(std::function<void()> run, std::function<CheckResult()> compare) {
  return {run, [run, compare] {
            run();
            return compare();
          }};
}

// One point's kernel, ready to run: made once per shape (kernel, implementation, parameters) and
// bound to each of its modes in turn, so setup (allocation, inputs, weights) is paid once. Errors
// are thrown as std::exception with a message that says what failed.
class Instance {
 public:
  virtual ~Instance() = default;
  // Brings the instance into the state `mode` needs (a backward pass needs the forward pass's saved
  // state) and returns its calls. Called once per mode before it is timed; not timed. The mode is
  // one the kernel declares.
  virtual BoundMode bind(const std::string& mode) = 0;
  // The CUDA stream run() enqueues on (a cudaStream_t); nullptr for CPU implementations.
  virtual void* stream() const { return nullptr; }
  // Device memory the instance holds by its own count (0 when it keeps none). The worker measures
  // the device's memory around each point too and records the larger of the two.
  virtual std::size_t device_bytes() const { return 0; }
};

using InstanceFactory = std::function<std::unique_ptr<Instance>(const Parameters& params)>;

// Where a kernel or an implementation comes from: built in (plugin empty), a plugin library, or a
// Python module (python set: plugin is the module's name, library its source file).
struct Origin {
  std::string plugin;   // the plugin's name
  std::string version;  // the plugin's version
  std::string library;  // the library file it was loaded from
  std::string sha256;   // hex SHA-256 of that file
  bool python = false;
};

struct ImplementationSpec {
  std::string name;
  Backend backend = Backend::cpu;
  std::string help;
  InstanceFactory make;
  Origin origin;
  // The Python module that declares it, when the Python worker runs it (python/kernelsweep): the
  // rank hands its points to `python3 -m kernelsweep.worker` instead of the C++ worker, and `make`
  // is not called.
  std::string python_module;
};

// ---- what a kernel declares ----------------------------------------------------------------------

// The element of `items` (parameters, implementations, kernels) named `wanted`, or null.
template <class Items> auto find_named(Items& items, std::string_view wanted) -> decltype(&*items.begin()) {
  for (auto& item : items)
    if (item.name == wanted) return &item;
  return nullptr;
}

struct KernelSpec {
  std::string name;
  std::string title;  // human name, used in document titles: "Chunked distillation cosine loss"
  std::string description;
  std::vector<ParamSpec> parameters;
  std::vector<std::string> modes;
  std::vector<ImplementationSpec> implementations;
  // Constraints between parameters (hidden must be even, ...): the problem, if any, as "key: what is wrong".
  std::function<std::optional<std::string>(const Parameters&)> validate;
  // FLOPs and bytes of one call in a mode; none declared: nothing counted.
  std::function<Work(const Parameters&, const std::string& mode)> work;
  Origin origin;  // of the declaration

  const ParamSpec* parameter(std::string_view wanted) const { return find_named(parameters, wanted); }
  const ImplementationSpec* implementation(std::string_view wanted) const {
    return find_named(implementations, wanted);
  }
  bool has_mode(std::string_view wanted) const { return std::find(modes.begin(), modes.end(), wanted) != modes.end(); }

  // The problem with a complete parameter object (every parameter, each of its type and within its
  // bounds, then validate()), as "key: what is wrong"; nothing when it is a point of this kernel.
  std::optional<std::string> problem_with(const Json& params) const {
    for (const auto& p : parameters) {
      if (!params.contains(p.name)) return p.name + ": missing";
      if (auto problem = p.problem_with(params.at(p.name))) return problem;
    }
    for (const auto& [key, value] : params.items())
      if (!parameter(key)) return key + ": not a parameter of " + name;
    return validate ? validate(Parameters(params)) : std::nullopt;
  }

  // An instance of `implementation` at `params`. Throws std::invalid_argument (naming the kernel) for
  // an unknown implementation or parameters that are not a point of this kernel.
  std::unique_ptr<Instance> instantiate(std::string_view implementation_name, const Json& params) const {
    const ImplementationSpec* chosen = implementation(implementation_name);
    if (!chosen) throw std::invalid_argument(name + ": unknown implementation " + std::string(implementation_name));
    if (auto problem = problem_with(params)) throw std::invalid_argument(name + ": " + *problem);
    return chosen->make(Parameters(params));
  }

  // instance.bind(mode), for a mode this kernel declares; throws std::invalid_argument otherwise.
  BoundMode bind(Instance& instance, const std::string& mode) const {
    if (!has_mode(mode)) throw std::invalid_argument(name + ": unknown mode " + mode);
    return instance.bind(mode);
  }

  // FLOPs and bytes of one call of `mode` at `params`; throws std::invalid_argument for a mode this
  // kernel does not declare.
  Work work_of(const Json& params, const std::string& mode) const {
    if (!has_mode(mode)) throw std::invalid_argument(name + ": unknown mode " + mode);
    return work ? work(Parameters(params), mode) : Work{};
  }
};

// ---- declaring, fluently -------------------------------------------------------------------------

// One parameter being declared: its bounds and special values are added by chaining.
class ParamDeclaration {
 public:
  ParamDeclaration(std::vector<ParamSpec>& parameters, std::size_t index) : parameters_(parameters), index_(index) {}
  ParamDeclaration& min(double value) { return bound(&ParamSpec::min, value); }
  ParamDeclaration& max(double value) { return bound(&ParamSpec::max, value); }
  // A value accepted besides those of the type ("auto").
  ParamDeclaration& also(Json value) {
    parameters_[index_].special.push_back(std::move(value));
    return *this;
  }

 private:
  ParamDeclaration& bound(std::optional<double> ParamSpec::*which, double value) {
    parameters_[index_].*which = value;
    return *this;
  }
  std::vector<ParamSpec>& parameters_;
  std::size_t index_;
};

// What the body of KS_KERNEL fills in.
class KernelDeclaration {
 public:
  explicit KernelDeclaration(KernelSpec& spec) : spec_(spec) {}

  ParamDeclaration integer(std::string name, std::int64_t default_value, std::string help) {
    return add(std::move(name), ParamType::integer, default_value, std::move(help));
  }
  ParamDeclaration number(std::string name, double default_value, std::string help) {
    return add(std::move(name), ParamType::number, default_value, std::move(help));
  }
  ParamDeclaration boolean(std::string name, bool default_value, std::string help) {
    return add(std::move(name), ParamType::boolean, default_value, std::move(help));
  }
  ParamDeclaration text(std::string name, std::string default_value, std::string help) {
    return add(std::move(name), ParamType::string, std::move(default_value), std::move(help));
  }
  // A string parameter that takes one of `allowed`.
  ParamDeclaration choice(std::string name, std::string default_value, std::vector<std::string> allowed,
                          std::string help) {
    ParamDeclaration declared = text(std::move(name), std::move(default_value), std::move(help));
    spec_.parameters.back().allowed.assign(allowed.begin(), allowed.end());
    return declared;
  }
  void modes(std::vector<std::string> names) { spec_.modes = std::move(names); }
  void work(std::function<Work(const Parameters&, const std::string&)> counts) { spec_.work = std::move(counts); }
  void validate(std::function<std::optional<std::string>(const Parameters&)> check) {
    spec_.validate = std::move(check);
  }

 private:
  ParamDeclaration add(std::string name, ParamType type, Json default_value, std::string help) {
    ParamSpec p;
    p.name = std::move(name);
    p.type = type;
    p.default_value = std::move(default_value);
    p.help = std::move(help);
    spec_.parameters.push_back(std::move(p));
    return ParamDeclaration(spec_.parameters, spec_.parameters.size() - 1);
  }
  KernelSpec& spec_;
};

// ---- the registry --------------------------------------------------------------------------------

class Registry {
 public:
  // Throws std::invalid_argument when the name is taken.
  void add(KernelSpec spec) {
    if (const KernelSpec* taken = find(spec.name))
      throw std::invalid_argument("kernel " + spec.name + " is registered twice (" + describe(taken->origin) + " and " +
                                  describe(spec.origin) + ")");
    kernels_.push_back(std::move(spec));
  }
  // Adds an implementation to a registered kernel; throws std::invalid_argument when the kernel is
  // unknown or already has an implementation of that name.
  void add(const std::string& kernel, ImplementationSpec implementation) {
    KernelSpec* target = find_named(kernels_, kernel);
    if (!target)
      throw std::invalid_argument("implementation " + implementation.name + " (" + describe(implementation.origin) +
                                  ") is for kernel " + kernel + ", which is not registered");
    if (const ImplementationSpec* taken = target->implementation(implementation.name))
      throw std::invalid_argument("implementation " + kernel + "/" + implementation.name + " is registered twice (" +
                                  describe(taken->origin) + " and " + describe(implementation.origin) + ")");
    target->implementations.push_back(std::move(implementation));
  }
  const KernelSpec* find(std::string_view name) const { return find_named(kernels_, name); }
  const std::vector<KernelSpec>& all() const { return kernels_; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& k : kernels_) out.push_back(k.name);
    return out;
  }

  static std::string describe(const Origin& origin) {
    if (origin.plugin.empty()) return "built in";
    if (origin.python) return "Python module " + origin.plugin + " from " + origin.library;
    return "plugin " + origin.plugin + " " + origin.version + " from " + origin.library;
  }

 private:
  std::vector<KernelSpec> kernels_;
};

// ---- registration from the files that declare kernels and implementations -------------------------

// What the KS_KERNEL and KS_IMPLEMENTATION objects of one binary (kernelsweep itself, or one plugin
// library) registered as it loaded. Static objects initialise in no fixed order across files, so
// kernels and implementations are collected here and applied to a Registry together, kernels first,
// each in name order: the same binary lists them (and plans blocks that name no implementation) in
// the same order however it was linked.
struct Registrations {
  std::vector<KernelSpec> kernels;
  std::vector<std::pair<std::string, ImplementationSpec>> implementations;  // (kernel, implementation)

  // Adds everything to `registry`, all or nothing, every entry marked with `origin`. Throws
  // std::invalid_argument (from Registry::add) on a name already taken or an unknown kernel.
  void apply_to(Registry& registry, const Origin& origin) const {
    Registry trial = registry;  // refuse before changing anything
    std::vector<KernelSpec> kernels_in_order = kernels;
    std::sort(kernels_in_order.begin(), kernels_in_order.end(), [](auto& a, auto& b) { return a.name < b.name; });
    for (KernelSpec& kernel : kernels_in_order) {
      kernel.origin = origin;
      trial.add(std::move(kernel));
    }
    auto implementations_in_order = implementations;
    std::sort(implementations_in_order.begin(), implementations_in_order.end(),
              [](auto& a, auto& b) { return std::tie(a.first, a.second.name) < std::tie(b.first, b.second.name); });
    for (auto& [kernel, implementation] : implementations_in_order) {
      implementation.origin = origin;
      trial.add(kernel, std::move(implementation));
    }
    registry = std::move(trial);
  }
};

// This binary's registrations. Hidden, so that each shared library keeps its own list.
__attribute__((visibility("hidden"))) inline Registrations& registrations_of_this_binary() {
  static Registrations registrations;
  return registrations;
}

struct KernelRegistrar {
  KernelRegistrar(const char* name, const char* title, const char* description, void (*declare)(KernelDeclaration&)) {
    KernelSpec spec;
    spec.name = name;
    spec.title = title;
    spec.description = description;
    KernelDeclaration declaration(spec);
    declare(declaration);
    registrations_of_this_binary().kernels.push_back(std::move(spec));
  }
};

// Registers the kernels and implementations this binary declared, as built in: kernelsweep's main()
// calls it once and passes the registry on.
inline void register_builtin_kernels(Registry& registry) {
  registrations_of_this_binary().apply_to(registry, Origin{});
}

struct ImplementationRegistrar {
  ImplementationRegistrar(const char* kernel, const char* name, Backend backend, const char* help, InstanceFactory make,
                          const char* python_module = "") {
    ImplementationSpec spec;
    spec.name = name;
    spec.backend = backend;
    spec.help = help;
    spec.make = std::move(make);
    spec.python_module = python_module;
    registrations_of_this_binary().implementations.emplace_back(kernel, std::move(spec));
  }
};

// The factory of an implementation that the Python worker runs: a C++ worker asked for it says so.
inline InstanceFactory runs_in_python_worker(const std::string& kernel, const std::string& name,
                                             const std::string& module) {
  return [=](const Parameters&) -> std::unique_ptr<Instance> {
    throw std::runtime_error(kernel + " " + name + " is a Python implementation (module " + module +
                             "): the Python worker runs it");
  };
}

}  // namespace ks

// Declares kernel NAME (a C identifier, as sweep files name it); the body that follows fills in
// `kernel` (a ks::KernelDeclaration&): parameters, modes, work counts, constraints.
#define KS_KERNEL(NAME, TITLE, DESCRIPTION)                                                                            \
  static void ks_declare_kernel_##NAME(::ks::KernelDeclaration& kernel);                                               \
  static const ::ks::KernelRegistrar ks_kernel_registrar_##NAME{#NAME, TITLE, DESCRIPTION, &ks_declare_kernel_##NAME}; \
  static void ks_declare_kernel_##NAME(::ks::KernelDeclaration& kernel)

// Registers implementation NAME of kernel KERNEL on BACKEND (cpu or cuda); the body that follows
// makes its instance from `params` (a const ks::Parameters&). Keep the macro on one line: builds
// without CUDA read it from .cu files to keep their CUDA implementations known (cmake/cuda_stubs.cmake).
#define KS_IMPLEMENTATION(KERNEL, NAME, BACKEND, HELP)                                              \
  static std::unique_ptr<::ks::Instance> ks_make_##KERNEL##_##NAME(const ::ks::Parameters& params); \
  static const ::ks::ImplementationRegistrar ks_implementation_registrar_##KERNEL##_##NAME{         \
      #KERNEL, #NAME, ::ks::Backend::BACKEND, HELP, &ks_make_##KERNEL##_##NAME};                    \
  static std::unique_ptr<::ks::Instance> ks_make_##KERNEL##_##NAME([[maybe_unused]] const ::ks::Parameters& params)

// An implementation this build cannot run (a CUDA implementation in a build without CUDA): it stays
// known, so that sweep files naming it stay valid everywhere, and making an instance says why not.
#define KS_UNAVAILABLE_IMPLEMENTATION(KERNEL, NAME, BACKEND, HELP) \
  KS_UNAVAILABLE_IMPLEMENTATION_BECAUSE(KERNEL, NAME, BACKEND, HELP, "kernelsweep was built without CUDA")

// The same, saying why not in REASON (a string literal): plugins built without CUDA say so, since
// the kernelsweep that loads them may well have CUDA.
#define KS_UNAVAILABLE_IMPLEMENTATION_BECAUSE(KERNEL, NAME, BACKEND, HELP, REASON)           \
  static const ::ks::ImplementationRegistrar ks_implementation_registrar_##KERNEL##_##NAME { \
#KERNEL, #NAME, ::ks::Backend::BACKEND, HELP,                                            \
        [](const ::ks::Parameters&) -> std::unique_ptr < ::ks::Instance>                     \
    { throw std::runtime_error(#KERNEL " " #NAME ": " REASON); }                             \
  }

// Registers implementation NAME of kernel KERNEL that the Python worker runs, from MODULE (a string
// literal naming a module of python/kernelsweep or one on the worker's path). BACKEND: cpu, cuda, or
// any (the rank's GPU where it has one, else the CPU).
#define KS_PYTHON_IMPLEMENTATION(KERNEL, NAME, BACKEND, HELP, MODULE)                                         \
  static const ::ks::ImplementationRegistrar ks_implementation_registrar_##KERNEL##_##NAME {                  \
#KERNEL, #NAME, ::ks::Backend::BACKEND, HELP, ::ks::runs_in_python_worker(#KERNEL, #NAME, MODULE), MODULE \
  }
