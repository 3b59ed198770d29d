#include "plugins/python_modules.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/child_process.h"
#include "plugins/plugins.h"

extern char** environ;

namespace ks {
namespace {

std::string last_line_of(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) trimmed.pop_back();
  const auto newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

ParamType param_type_from(const std::string& name, const std::string& where) {
  if (name == "integer") return ParamType::integer;
  if (name == "number") return ParamType::number;
  if (name == "string") return ParamType::string;
  if (name == "boolean") return ParamType::boolean;
  throw PluginError(fmt::format("{}: parameter type {} is not integer, number, string or boolean", where, name));
}

Backend backend_from(const std::string& name, const std::string& where) {
  if (name == "cpu") return Backend::cpu;
  if (name == "cuda") return Backend::cuda;
  if (name == "any") return Backend::any;
  throw PluginError(fmt::format("{}: backend {} is not cpu, cuda or any", where, name));
}

Origin origin_from(const Json& declared) {
  return {declared.at("module").get<std::string>(), declared.value("version", ""), declared.value("source", ""),
          declared.value("sha256", ""), true};
}

ParamSpec parameter_from(const Json& p, const std::string& where) {
  ParamSpec spec;
  spec.name = p.at("name").get<std::string>();
  spec.type = param_type_from(p.at("type").get<std::string>(), where + " parameter " + spec.name);
  spec.default_value = p.value("default", Json());
  spec.allowed = p.value("allowed", std::vector<Json>{});
  if (p.contains("min") && !p["min"].is_null()) spec.min = p["min"].get<double>();
  if (p.contains("max") && !p["max"].is_null()) spec.max = p["max"].get<double>();
  spec.special = p.value("special", std::vector<Json>{});
  spec.help = p.value("help", "");
  if (!spec.default_value.is_null())
    if (auto problem = spec.problem_with(spec.default_value))
      throw PluginError(fmt::format("{}: the default of {}", where, *problem));
  return spec;
}

KernelSpec kernel_from(const Json& k) {
  KernelSpec spec;
  spec.name = k.at("name").get<std::string>();
  const std::string where = fmt::format("Python module {}: kernel {}", k.at("module").get<std::string>(), spec.name);
  spec.title = k.value("title", spec.name);
  spec.description = k.value("description", "");
  for (const Json& p : k.at("parameters")) spec.parameters.push_back(parameter_from(p, where));
  spec.modes = k.at("modes").get<std::vector<std::string>>();
  spec.origin = origin_from(k);
  return spec;
}

ImplementationSpec implementation_from(const Json& i) {
  ImplementationSpec spec;
  spec.name = i.at("name").get<std::string>();
  const std::string module = i.at("module").get<std::string>();
  const std::string kernel = i.at("kernel").get<std::string>();
  spec.backend = backend_from(i.at("backend").get<std::string>(),
                              fmt::format("Python module {}: implementation {}/{}", module, kernel, spec.name));
  spec.help = i.value("help", "");
  spec.make = runs_in_python_worker(kernel, spec.name, module);
  spec.origin = origin_from(i);
  spec.python_module = module;
  return spec;
}

// Registers what describe printed, all or nothing.
void register_described(const Json& described, Registry& registry) {
  Registry trial = registry;
  try {
    for (const Json& k : described.at("kernels")) trial.add(kernel_from(k));
    for (const Json& i : described.at("implementations"))
      trial.add(i.at("kernel").get<std::string>(), implementation_from(i));
  } catch (const std::invalid_argument& e) {
    throw PluginError(fmt::format("Python modules: {}", e.what()));
  } catch (const Json::exception& e) {
    throw PluginError(
        fmt::format("Python modules: kernelsweep.describe printed an unexpected description: {}", e.what()));
  }
  registry = std::move(trial);
}

}  // namespace

void PythonSetup::add(const PythonSetup& other) {
  if (interpreter.empty()) interpreter = other.interpreter;
  for (const auto& m : other.modules)
    if (std::find(modules.begin(), modules.end(), m) == modules.end()) modules.push_back(m);
  for (const auto& p : other.path)
    if (std::find(path.begin(), path.end(), p) == path.end()) path.push_back(p);
}

std::string PythonSetup::interpreter_to_run() const {
  if (!interpreter.empty()) return interpreter;
  const char* chosen = std::getenv("KERNELSWEEP_PYTHON");
  return chosen && *chosen ? chosen : "python3";
}

std::string PythonSetup::python_path() const {
  std::vector<std::string> entries = path;
  entries.push_back(python_package_folder().string());
  if (const char* inherited = std::getenv("PYTHONPATH"); inherited && *inherited) entries.emplace_back(inherited);
  return fmt::format("{}", fmt::join(entries, ":"));
}

std::vector<std::string> PythonSetup::environment() const {
  std::vector<std::string> out;
  for (char** entry = environ; *entry; ++entry)
    if (std::strncmp(*entry, "PYTHONPATH=", 11) != 0) out.emplace_back(*entry);
  out.push_back("PYTHONPATH=" + python_path());
  // Output unbuffered, so that a worker killed mid-point has said what it printed.
  out.push_back("PYTHONUNBUFFERED=1");
  return out;
}

void load_python_modules(const PythonSetup& setup, Registry& registry) {
  if (setup.modules.empty()) return;
  std::vector<std::string> argv{setup.interpreter_to_run(), "-m", "kernelsweep.describe"};
  argv.insert(argv.end(), setup.modules.begin(), setup.modules.end());
  ChildOutput output;
  try {
    output = run_collecting(argv, setup.environment());
  } catch (const std::runtime_error& e) { throw PluginError(e.what()); }
  if (output.exit_code != 0) {
    const std::string why = last_line_of(output.err);
    // describe's last line names the module that failed: "MODULE: Type: message".
    if (!why.empty()) throw PluginError("Python module " + why);
    throw PluginError(fmt::format("Python modules {}: {} exited with code {}", fmt::join(setup.modules, ", "), argv[0],
                                  output.exit_code));
  }
  const Json described = Json::parse(output.out, nullptr, false);
  if (described.is_discarded())
    throw PluginError(
        fmt::format("Python modules {}: kernelsweep.describe printed no JSON", fmt::join(setup.modules, ", ")));
  register_described(described, registry);
}

}  // namespace ks
