#include "run/sweep_loading.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "common/printable.h"
#include "config/parse.h"
#include "plan/plan.h"
#include "plugins/plugins.h"
#include "plugins/requested.h"
#include "report/filter.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

// Loads the plugins the sweep's text names; one that fails is the sweep file's error at its entry.
void load_sweep_plugins(const std::string& text, const std::string& path, Registry& registry,
                        std::vector<std::string>& loaded) {
  const fs::path folder = fs::path(path).parent_path();
  for (const PluginReference& plugin : plugin_references(text, path)) {
    try {
      const Origin origin = load_plugin(find_plugin(plugin.name, folder.empty() ? fs::path(".") : folder), registry);
      if (std::find(loaded.begin(), loaded.end(), origin.library) == loaded.end()) loaded.push_back(origin.library);
    } catch (const PluginError& e) {
      throw SweepFileError(plugin.where, plugin.key, e.what());
    }
  }
}

fs::path sweep_folder(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? fs::path(".") : folder;
}

// Loads the Python modules the sweep's text names, with those of the command line (loaded already:
// `command_line`). A module that fails is the sweep file's error at its entry.
PythonSetup load_sweep_python(const std::string& text, const std::string& path, const PythonSetup& command_line,
                              Registry& registry) {
  const PythonReferences references = python_references(text, path);
  PythonSetup setup;
  setup.interpreter = references.interpreter;
  for (const PluginReference& folder : references.path)
    setup.path.push_back(fs::absolute(sweep_folder(path) / folder.name).lexically_normal().string());
  for (const PluginReference& module : references.modules) setup.modules.push_back(module.name);
  setup.add(command_line);
  PythonSetup to_load = setup;
  to_load.modules.clear();
  for (const PluginReference& module : references.modules)
    if (std::find(command_line.modules.begin(), command_line.modules.end(), module.name) == command_line.modules.end())
      to_load.modules.push_back(module.name);
  try {
    load_python_modules(to_load, registry);
  } catch (const PluginError& e) {
    const std::string message = e.what();
    for (const PluginReference& module : references.modules)
      if (message.starts_with("Python module " + module.name + ":")) throw SweepFileError(module.where, module.key, message);
    throw SweepFileError(references.where, "python.modules", message);
  }
  return setup;
}

// The text a --where key names for a point of the plan (a measured point's keys status and file are
// refused before: a plan has neither).
std::optional<std::string> value_of(const Point& point, const std::string& key) {
  if (key == "kernel") return point.kernel;
  if (key == "implementation") return point.implementation;
  if (key == "mode") return point.mode;
  if (key == "point") return point.id;
  return parameter_text(point.params, key);
}

// The points of `plan` that --where keeps, renumbered and regrouped as a shard is.
Plan points_where(const Plan& plan, const std::string& expression) {
  const RowFilter filter = RowFilter::parse(expression);
  for (const std::string& key : filter.keys())
    if (key == "status" || key == "file")
      throw FilterError(fmt::format("--where: {} is what a measured point has; plan and run select points by kernel, "
                                    "implementation, mode, point and parameters", key));
  Plan kept;
  for (const Point& point : plan.points) {
    if (!filter.matches([&](const std::string& key) { return value_of(point, key); })) continue;
    kept.points.push_back(point);
    kept.points.back().index = kept.points.size() - 1;
  }
  kept.groups = group_points(kept.points);
  return kept;
}

std::optional<LoadedSweep> plan_loaded_text(const std::string& text, const PlanRequest& request, Registry& registry,
                                            std::vector<std::string> plugins, bool print_errors) {
  try {
    LoadedSweep out;
    load_sweep_plugins(text, request.sweep_file, registry, plugins);
    out.python = load_sweep_python(text, request.sweep_file, command_line_python(request), registry);
    out.spec = parse_sweep_text(text, request.sweep_file, registry);
    PlanOptions options;
    options.max_points = request.max_points;
    if (!request.shard.empty()) parse_shard(request.shard, options);
    out.plan = make_plan(out.spec, registry, options);
    if (!request.where.empty()) out.plan = points_where(out.plan, request.where);
    out.plugins = std::move(plugins);
    return out;
  } catch (const SweepFileError& e) {
    if (print_errors) std::cerr << e.what() << "\n";
  } catch (const FilterError& e) {
    if (print_errors) std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
  } catch (const PlanError& e) {
    if (print_errors) std::cerr << request.sweep_file << ": " << e.what() << "\n";
  }
  return std::nullopt;
}

}  // namespace

PythonSetup command_line_python(const PlanRequest& request) {
  PythonSetup setup;
  setup.modules = request.python_modules;
  for (const std::string& folder : request.python_path) setup.path.push_back(fs::absolute(folder).lexically_normal().string());
  return setup;
}

bool load_python_or_say_why(const PythonSetup& setup, Registry& registry) {
  try {
    load_python_modules(setup, registry);
    return true;
  } catch (const PluginError& e) {
    std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
    return false;
  }
}

std::optional<std::vector<std::string>> load_plugins_or_say_why(const std::vector<std::string>& named,
                                                               Registry& registry) {
  try {
    return load_requested_plugins(named, registry);
  } catch (const PluginError& e) {
    std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
    return std::nullopt;
  }
}

std::optional<LoadedSweep> load_and_plan(const PlanRequest& request, Registry& registry, bool print_errors) {
  auto plugins = load_plugins_or_say_why(request.plugins, registry);
  if (!plugins) return std::nullopt;
  if (!load_python_or_say_why(command_line_python(request), registry)) return std::nullopt;
  std::string text;
  try {
    text = read_sweep_file(request.sweep_file);
  } catch (const SweepFileError& e) {
    if (print_errors) std::cerr << e.what() << "\n";
    return std::nullopt;
  }
  return plan_loaded_text(text, request, registry, std::move(*plugins), print_errors);
}

std::optional<LoadedSweep> plan_text(const std::string& text, const std::string& path, Registry& registry,
                                     bool print_errors, const std::string& shard, const std::string& where) {
  PlanRequest request;
  request.sweep_file = path;
  request.shard = shard;
  request.where = where;
  return plan_loaded_text(text, request, registry, {}, print_errors);
}

}  // namespace ks
