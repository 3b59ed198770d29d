#pragma once
// Sweep -> spec and plan, the one way every command that plans loads its sweep: the sweep file of
// validate, plan, run and submit, or the sweep text a results file keeps (status, merge). The
// plugins the command line, KERNELSWEEP_PLUGIN_PATH and the sweep file name are loaded into the
// registry first, since the sweep's kernels may come from them. Problems are printed as one line on
// standard error; the caller exits with kExitBadInput.
#include <optional>
#include <string>
#include <vector>

#include "cluster/work_plan.h"
#include "common/point_id_set.h"
#include "config/sweep_spec.h"
#include "plan/plan.h"
#include "plan/point_enumerator.h"
#include "plugins/python_modules.h"
#include "run/run.h"
#include "store/results_file.h"

namespace ks {

// A loaded sweep and the plan its request asks for (--shard, --where, --max-points), made only as the
// command needs it. A problem met on the way is printed (where the load asked for it) and gives
// nothing or false.
struct LoadedSweep {
  SweepSpec spec;
  std::vector<std::string> plugins;  // every plugin library loaded for it, in loading order
  PythonSetup python;                // the Python modules loaded for it, and how its Python worker runs

  // --shard and --max-points as the plan takes them (the walks below add --where's filter).
  std::optional<PlanOptions> plan_options() const;
  // The points of the plan, visited one at a time in bounded memory.
  bool stream(const PointVisitor& visit) const;
  // How many points the plan has, made only where the count needs them.
  std::optional<std::uint64_t> count() const;
  // Rank 0 of a run: the plan as a WorkPlan, made in one pass in bounded memory; `keys`, when given,
  // receives each measurement's key with its index, every point's and then those of its further
  // repetitions (add_repetition_keys; a resume marks with them what the results file holds:
  // WorkPlan::mark_before).
  std::optional<WorkPlan> work_plan(PositionedKeys* keys = nullptr) const;
  // The keys of the ids of the points (common/point_id_set.h) with their positions, in plan order,
  // then those of their further repetitions, without holding the points (status).
  std::optional<PositionedKeys> point_keys() const;

  PlanRequest request;
  const Registry* registry = nullptr;
  bool print_errors = true;
};

// The sweep of `request` loaded into `registry`, with the plugins and Python modules it needs.
std::optional<LoadedSweep> load_sweep(const PlanRequest& request, Registry& registry, bool print_errors = true);

// The request that plans again the sweep a results file keeps: its shard, its --where and no size
// limit, since the run that made the file accepted its size.
PlanRequest stored_sweep_request(const RunInfo& info);

// Loads the plugins of KERNELSWEEP_PLUGIN_PATH and `named`; prints the problem and returns nothing when
// one fails.
std::optional<std::vector<std::string>> load_plugins_or_say_why(const std::vector<std::string>& named,
                                                                Registry& registry);

// Loads the plugins and Python modules of the command line (--plugin, KERNELSWEEP_PLUGIN_PATH,
// --python-module, --python-path); the plugin libraries loaded, or nothing when one fails (the problem
// printed).
std::optional<std::vector<std::string>> load_command_line_kernels(const PlanRequest& request, Registry& registry);

}  // namespace ks
