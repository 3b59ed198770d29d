#include "run/sweep_loading.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "common/printable.h"
#include "config/parse.h"
#include "plan/plan.h"
#include "plugins/plugins.h"
#include "plugins/requested.h"
#include "view/filter.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

fs::path sweep_folder(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? fs::path(".") : folder;
}

// Loads the plugins the sweep's text names; one that fails is the sweep file's error at its entry.
void load_sweep_plugins(const std::string& text, const std::string& path, Registry& registry,
                        std::vector<std::string>& loaded) {
  for (const PluginReference& plugin : plugin_references(text, path)) {
    try {
      const Origin origin = load_plugin(find_plugin(plugin.name, sweep_folder(path)), registry);
      if (std::find(loaded.begin(), loaded.end(), origin.library) == loaded.end()) loaded.push_back(origin.library);
    } catch (const PluginError& e) { throw SweepFileError(plugin.where, plugin.key, e.what()); }
  }
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
      if (message.starts_with("Python module " + module.name + ":"))
        throw SweepFileError(module.where, module.key, message);
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
  if (key == "point") return point.id();
  return parameter_text(point.params, key);
}

// The --where filter of a plan: refuses the keys only a measured point has.
RowFilter plan_filter(const std::string& expression) {
  RowFilter filter = RowFilter::parse(expression);
  for (const std::string& key : filter.keys())
    if (key == "status" || key == "file")
      throw FilterError(
          fmt::format("--where: {} is what a measured point has; plan and run select points by kernel, "
                      "implementation, mode, point and parameters",
                      key));
  return filter;
}

// --shard and --max-points as the plan takes them: the one place --shard is read. Throws PlanError.
PlanOptions options_of(const PlanRequest& request) {
  PlanOptions options;
  options.max_points = request.max_points;
  if (!request.shard.empty()) parse_shard(request.shard, options);
  return options;
}

// The options of a walk of the plan: options_of, and the points --where keeps. Throws PlanError and
// FilterError.
PlanOptions walk_options(const PlanRequest& request) {
  PlanOptions options = options_of(request);
  if (request.where.empty()) return options;
  options.keep = [filter = plan_filter(request.where)](const Point& point) {
    return filter.matches([&](const std::string& key) { return value_of(point, key); });
  };
  return options;
}

// What `make` returns; a problem with the sweep is printed as one line (when the load asked for it)
// and gives nothing.
template <class Make> auto or_say_why(const LoadedSweep& sweep, Make&& make) -> std::optional<decltype(make())> {
  try {
    return make();
  } catch (const SweepFileError& e) {
    if (sweep.print_errors) std::cerr << e.what() << "\n";
  } catch (const FilterError& e) {
    if (sweep.print_errors) std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
  } catch (const PlanError& e) {
    if (sweep.print_errors) std::cerr << sweep.request.sweep_file << ": " << e.what() << "\n";
  }
  return std::nullopt;
}

// What `load` returns; a plugin or Python module that fails to load is printed as one line and gives
// nothing.
template <class Load> auto or_say_why(Load&& load) -> std::optional<decltype(load())> {
  try {
    return load();
  } catch (const PluginError& e) {
    std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
    return std::nullopt;
  }
}

// The Python setup of the command line: --python-module and --python-path (relative to the working
// directory).
PythonSetup command_line_python(const PlanRequest& request) {
  PythonSetup setup;
  setup.modules = request.python_modules;
  for (const std::string& folder : request.python_path)
    setup.path.push_back(fs::absolute(folder).lexically_normal().string());
  return setup;
}

}  // namespace

std::optional<std::vector<std::string>> load_plugins_or_say_why(const std::vector<std::string>& named,
                                                                Registry& registry) {
  return or_say_why([&] { return load_requested_plugins(named, registry); });
}

std::optional<std::vector<std::string>> load_command_line_kernels(const PlanRequest& request, Registry& registry) {
  return or_say_why([&] {
    std::vector<std::string> plugins = load_requested_plugins(request.plugins, registry);
    load_python_modules(command_line_python(request), registry);
    return plugins;
  });
}

std::optional<LoadedSweep> load_sweep(const PlanRequest& request, Registry& registry, bool print_errors) {
  LoadedSweep out;
  out.request = request;
  out.registry = &registry;
  out.print_errors = print_errors;
  if (!request.sweep_text) {  // a stored sweep's command has loaded the plugins of its command line
    auto plugins = load_command_line_kernels(request, registry);
    if (!plugins) return std::nullopt;
    out.plugins = std::move(*plugins);
  }
  const auto loaded = or_say_why(out, [&] {
    const std::string text = request.sweep_text ? *request.sweep_text : read_sweep_file(request.sweep_file);
    load_sweep_plugins(text, request.sweep_file, registry, out.plugins);
    out.python = load_sweep_python(text, request.sweep_file, command_line_python(request), registry);
    out.spec = parse_sweep_text(text, request.sweep_file, registry);
    return true;
  });
  if (!loaded) return std::nullopt;
  return out;
}

PlanRequest stored_sweep_request(const RunInfo& info) {
  PlanRequest request;
  request.sweep_file = info.sweep_path;
  request.sweep_text = info.sweep_text;
  request.shard = shard_text(info.shard_index, info.shard_count);
  request.where = info.where;
  request.max_points = std::numeric_limits<std::uint64_t>::max();
  return request;
}

std::optional<PlanOptions> LoadedSweep::plan_options() const {
  return or_say_why(*this, [&] { return options_of(request); });
}

bool LoadedSweep::stream(const PointVisitor& visit) const {
  const auto streamed = or_say_why(*this, [&] {
    for_each_point(spec, *registry, walk_options(request), visit);
    return true;
  });
  return streamed.has_value();
}

std::optional<std::uint64_t> LoadedSweep::count() const {
  return or_say_why(*this, [&] { return count_points(spec, *registry, walk_options(request)); });
}

// The most points whose room work_plan sets aside before it walks the plan (the address space of
// 640 MB of keys; a larger plan grows its arrays as it goes).
constexpr std::uint64_t kPlanRoom = std::uint64_t{1} << 24;

std::optional<WorkPlan> LoadedSweep::work_plan(PositionedKeys* keys) const {
  return or_say_why(*this, [&] {
    // The enumerator that walks the plan now makes a group's points again when rank 0 hands them out.
    auto points = std::make_shared<PointEnumerator>(spec, *registry);
    const PlanOptions options = walk_options(request);
    WorkPlan plan(
        *registry,
        [points, keep = options.keep](const PointSource& source) {
          std::vector<Point> group = points->group_at(source);
          if (keep) std::erase_if(group, [&](const Point& point) { return !keep(point); });
          return group;
        },
        spec.protocol.repetitions);
    // Room for every point the grids may give, taken only as it is filled: grown by doubling, a
    // million keys were moved once more and their pages faulted in twice.
    const std::uint64_t room = std::min<std::uint64_t>(points->upper_bound(), kPlanRoom);
    plan.reserve(room);
    if (keys) keys->reserve(room);
    for_each_point(*points, spec, *registry, options, [&](Point& point, std::size_t group) {
      plan.add(point, group);
      if (keys) keys->emplace_back(point.key, point.index);
      return true;
    });
    plan.seal();
    if (keys) add_repetition_keys(*keys, spec.protocol.repetitions);
    return plan;
  });
}

std::optional<PositionedKeys> LoadedSweep::point_keys() const {
  return or_say_why(*this, [&] {
    PositionedKeys keys;
    for_each_point(spec, *registry, walk_options(request), [&keys](Point& point, std::size_t) {
      keys.emplace_back(point.key, keys.size());
      return true;
    });
    add_repetition_keys(keys, spec.protocol.repetitions);
    return keys;
  });
}

}  // namespace ks
