#pragma once
// Sweep file -> spec and plan, the first step of validate, plan, run and status: the plugins the
// command line, KERNELSWEEP_PLUGIN_PATH and the sweep file name are loaded into the registry first,
// since the sweep's kernels may come from them. Problems are printed as one line on standard error;
// the caller exits with kExitBadInput.
#include <optional>
#include <string>
#include <vector>

#include "cluster/work_plan.h"
#include "config/sweep_spec.h"
#include "common/point_id_set.h"
#include "plan/point_enumerator.h"
#include "plugins/python_modules.h"
#include "run/run.h"

namespace ks {

struct LoadedSweep {
  SweepSpec spec;
  Plan plan;  // empty when only loaded (load_sweep)
  std::vector<std::string> plugins;  // every plugin library loaded for it, in loading order
  PythonSetup python;                // the Python modules loaded for it, and how its Python worker runs
};

// The sweep file request.sweep_file, its plugins and request.plugins loaded into `registry`, and its
// plan (request.shard, request.where) made.
std::optional<LoadedSweep> load_and_plan(const PlanRequest& request, Registry& registry, bool print_errors = true);
// The same without the plan: for commands that stream the points or only count them.
std::optional<LoadedSweep> load_sweep(const PlanRequest& request, Registry& registry, bool print_errors = true);

// The points of the plan that load_and_plan would make, visited one at a time in bounded memory;
// a problem met on the way is printed and gives false.
bool stream_plan(const LoadedSweep& sweep, const PlanRequest& request, const Registry& registry,
                 const PointVisitor& visit);
// How many points that plan has, made only where the count needs them; nothing (the problem
// printed) when the sweep is refused.
std::optional<std::uint64_t> count_plan(const LoadedSweep& sweep, const PlanRequest& request, const Registry& registry);
// Rank 0 of a run: the plan as a WorkPlan, made in one pass in bounded memory; `keys`, when given,
// receives each measurement's key with its index, every point's and then those of its further
// repetitions (add_repetition_keys; a resume marks with them what the results file holds:
// WorkPlan::mark_before). Nothing (the problem printed) when the sweep is refused.
std::optional<WorkPlan> plan_work(const LoadedSweep& sweep, const PlanRequest& request, const Registry& registry,
                                  PositionedKeys* keys = nullptr);
// The same from text already read (status re-plans the text stored in a results file); its plugins
// are found relative to the folder of `path`. `shard` ("i/N") keeps that shard of the plan, `where`
// (a --where expression) the points it selects.
std::optional<LoadedSweep> plan_text(const std::string& text, const std::string& path, Registry& registry,
                                     bool print_errors = true, const std::string& shard = "",
                                     const std::string& where = "");

// The Python setup of the command line: --python-module and --python-path (relative to the working
// directory).
PythonSetup command_line_python(const PlanRequest& request);

// The keys of the ids of the points plan_text makes (common/point_id_set.h) with their positions, in
// plan order, then those of their further repetitions, without holding the points (status); nothing (the problem printed) when the text does not plan here.
std::optional<PositionedKeys> plan_keys_of_text(const std::string& text, const std::string& path,
                                                Registry& registry, const std::string& shard,
                                                const std::string& where);

// Loads the Python modules of `setup`; prints the problem and returns false when one fails.
bool load_python_or_say_why(const PythonSetup& setup, Registry& registry);

// Loads the plugins of KERNELSWEEP_PLUGIN_PATH and `named`; prints the problem and returns nothing when
// one fails.
std::optional<std::vector<std::string>> load_plugins_or_say_why(const std::vector<std::string>& named,
                                                               Registry& registry);

}  // namespace ks
