#include <stdexcept>

#include "kernels/kernel.h"

namespace ks {

// Each kernel folder defines one of these; adding a kernel adds one line below.
KernelSpec make_gemm_kernel();
KernelSpec make_distill_cosine_kernel();
KernelSpec make_noop_kernel();

void register_builtin_kernels(Registry& registry) {
  registry.add(make_gemm_kernel());
  registry.add(make_distill_cosine_kernel());
  registry.add(make_noop_kernel());
}

const char* to_string(ParamType type) {
  switch (type) {
    case ParamType::integer: return "integer";
    case ParamType::number: return "number";
    case ParamType::string: return "string";
    case ParamType::boolean: return "boolean";
  }
  return "?";
}

const char* to_string(Backend backend) { return backend == Backend::cuda ? "cuda" : "cpu"; }

const ParamSpec* KernelSpec::parameter(const std::string& wanted) const {
  for (const auto& p : parameters)
    if (p.name == wanted) return &p;
  return nullptr;
}

const ImplementationSpec* KernelSpec::implementation(const std::string& wanted) const {
  for (const auto& i : implementations)
    if (i.name == wanted) return &i;
  return nullptr;
}

bool KernelSpec::has_mode(const std::string& wanted) const {
  for (const auto& m : modes)
    if (m == wanted) return true;
  return false;
}

Registry& Registry::global() {
  static Registry registry;
  return registry;
}

void Registry::add(KernelSpec spec) {
  if (find(spec.name)) throw std::logic_error("kernel registered twice: " + spec.name);
  kernels_.push_back(std::move(spec));
}

const KernelSpec* Registry::find(const std::string& wanted) const {
  for (const auto& k : kernels_)
    if (k.name == wanted) return &k;
  return nullptr;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& k : kernels_) out.push_back(k.name);
  return out;
}

}  // namespace ks
