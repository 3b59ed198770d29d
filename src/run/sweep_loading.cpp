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
  if (key == "point") return point.id();
  return parameter_text(point.params, key);
}

// The --where filter of a plan: refuses the keys only a measured point has.
RowFilter plan_filter(const std::string& expression) {
  RowFilter filter = RowFilter::parse(expression);
  for (const std::string& key : filter.keys())
    if (key == "status" || key == "file")
      throw FilterError(fmt::format("--where: {} is what a measured point has; plan and run select points by kernel, "
                                    "implementation, mode, point and parameters", key));
  return filter;
}

PlanOptions plan_options(const PlanRequest& request) {
  PlanOptions options;
  options.max_points = request.max_points;
  if (!request.shard.empty()) parse_shard(request.shard, options);
  return options;
}

bool selects(const RowFilter& filter, const Point& point) {
  return filter.matches([&](const std::string& key) { return value_of(point, key); });
}

// The points of the plan (of the shard) that --where keeps, renumbered and regrouped as a shard is:
// the kept modes of one shape stay one group.
void for_each_point_where(PointEnumerator& points, const SweepSpec& spec, const Registry& registry,
                          const PlanRequest& request, const PointVisitor& visit) {
  const PlanOptions options = plan_options(request);
  if (request.where.empty()) return for_each_point(points, spec, registry, options, visit);
  const RowFilter filter = plan_filter(request.where);
  std::size_t index = 0, groups = 0;
  std::optional<std::size_t> last_kept;
  for_each_point(points, spec, registry, options, [&](Point& point, std::size_t group) {
    if (!selects(filter, point)) return true;
    if (last_kept != group) ++groups;
    last_kept = group;
    point.index = index++;
    return visit(point, groups - 1);
  });
}

void for_each_point_where(const SweepSpec& spec, const Registry& registry, const PlanRequest& request,
                          const PointVisitor& visit) {
  PointEnumerator points(spec, registry);
  for_each_point_where(points, spec, registry, request, visit);
}

// The plan of a sweep file stored in a results file: the run that made the file accepted its size,
// so no limit here.
PlanRequest stored_sweep_request(const std::string& path, const std::string& shard, const std::string& where) {
  PlanRequest request;
  request.sweep_file = path;
  request.shard = shard;
  request.where = where;
  request.max_points = std::numeric_limits<std::uint64_t>::max();
  return request;
}

// Runs `step`; a problem with the sweep is printed as one line (when asked) and gives false.
template <class Step>
bool or_say_why(const std::string& sweep_file, bool print_errors, Step&& step) {
  try {
    step();
    return true;
  } catch (const SweepFileError& e) {
    if (print_errors) std::cerr << e.what() << "\n";
  } catch (const FilterError& e) {
    if (print_errors) std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
  } catch (const PlanError& e) {
    if (print_errors) std::cerr << sweep_file << ": " << e.what() << "\n";
  }
  return false;
}

std::optional<LoadedSweep> load_text(const std::string& text, const PlanRequest& request, Registry& registry,
                                     std::vector<std::string> plugins, bool print_errors) {
  LoadedSweep out;
  const bool loaded = or_say_why(request.sweep_file, print_errors, [&] {
    load_sweep_plugins(text, request.sweep_file, registry, plugins);
    out.python = load_sweep_python(text, request.sweep_file, command_line_python(request), registry);
    out.spec = parse_sweep_text(text, request.sweep_file, registry);
    out.plugins = std::move(plugins);
  });
  if (!loaded) return std::nullopt;
  return out;
}

std::optional<LoadedSweep> plan_loaded(std::optional<LoadedSweep> sweep, const PlanRequest& request,
                                       const Registry& registry, bool print_errors) {
  if (!sweep) return std::nullopt;
  const bool planned = or_say_why(request.sweep_file, print_errors, [&] {
    for_each_point_where(sweep->spec, registry, request, [&](Point& point, std::size_t group) {
      append_point(sweep->plan, std::move(point), group);
      return true;
    });
  });
  if (!planned) return std::nullopt;
  return sweep;
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

std::optional<LoadedSweep> load_sweep(const PlanRequest& request, Registry& registry, bool print_errors) {
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
  return load_text(text, request, registry, std::move(*plugins), print_errors);
}

std::optional<LoadedSweep> load_and_plan(const PlanRequest& request, Registry& registry, bool print_errors) {
  return plan_loaded(load_sweep(request, registry, print_errors), request, registry, print_errors);
}

bool stream_plan(const LoadedSweep& sweep, const PlanRequest& request, const Registry& registry,
                 const PointVisitor& visit) {
  return or_say_why(request.sweep_file, true, [&] { for_each_point_where(sweep.spec, registry, request, visit); });
}

std::optional<std::uint64_t> count_plan(const LoadedSweep& sweep, const PlanRequest& request, const Registry& registry) {
  std::uint64_t count = 0;
  const bool counted = or_say_why(request.sweep_file, true, [&] {
    if (request.where.empty()) {
      count = count_points(sweep.spec, registry, plan_options(request));
    } else {
      for_each_point_where(sweep.spec, registry, request, [&](Point&, std::size_t) { return ++count; });
    }
  });
  if (!counted) return std::nullopt;
  return count;
}

// The most points whose room plan_work sets aside before it walks the plan (the address space of
// 640 MB of keys; a larger plan grows its arrays as it goes).
constexpr std::uint64_t kPlanRoom = std::uint64_t{1} << 24;

std::optional<WorkPlan> plan_work(const LoadedSweep& sweep, const PlanRequest& request, const Registry& registry,
                                  PositionedKeys* keys) {
  std::optional<WorkPlan> plan;
  const bool planned = or_say_why(request.sweep_file, true, [&] {
    // The enumerator that walks the plan now makes a group's points again when rank 0 hands them out.
    auto points = std::make_shared<PointEnumerator>(sweep.spec, registry);
    std::shared_ptr<const RowFilter> filter;
    if (!request.where.empty()) filter = std::make_shared<const RowFilter>(plan_filter(request.where));
    plan.emplace(
        registry,
        [points, filter](const PointSource& source) {
          std::vector<Point> group = points->group_at(source);
          if (filter) std::erase_if(group, [&](const Point& point) { return !selects(*filter, point); });
          return group;
        },
        sweep.spec.protocol.repetitions);
    // Room for every point the grids may give, taken only as it is filled: grown by doubling, a
    // million keys were moved once more and their pages faulted in twice.
    const std::uint64_t room = std::min<std::uint64_t>(points->upper_bound(), kPlanRoom);
    plan->reserve(room);
    if (keys) keys->reserve(room);
    for_each_point_where(*points, sweep.spec, registry, request, [&](Point& point, std::size_t group) {
      plan->add(point, group);
      if (keys) keys->emplace_back(point.key, point.index);
      return true;
    });
    plan->seal();
    if (keys) add_repetition_keys(*keys, sweep.spec.protocol.repetitions);
  });
  if (!planned) return std::nullopt;
  return plan;
}

std::optional<PositionedKeys> plan_keys_of_text(const std::string& text, const std::string& path,
                                                Registry& registry, const std::string& shard,
                                                const std::string& where) {
  const PlanRequest request = stored_sweep_request(path, shard, where);
  const auto sweep = load_text(text, request, registry, {}, true);
  if (!sweep) return std::nullopt;
  PositionedKeys keys;
  const bool planned = or_say_why(path, true, [&] {
    for_each_point_where(sweep->spec, registry, request, [&keys](Point& point, std::size_t) {
      keys.emplace_back(point.key, keys.size());
      return true;
    });
    add_repetition_keys(keys, sweep->spec.protocol.repetitions);
  });
  if (!planned) return std::nullopt;
  return keys;
}

std::optional<LoadedSweep> plan_text(const std::string& text, const std::string& path, Registry& registry,
                                     bool print_errors, const std::string& shard, const std::string& where) {
  const PlanRequest request = stored_sweep_request(path, shard, where);
  return plan_loaded(load_text(text, request, registry, {}, print_errors), request, registry, print_errors);
}

}  // namespace ks
