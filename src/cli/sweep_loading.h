#pragma once
// Sweep file -> spec and plan, the first step of validate, plan and run. Problems are printed as one
// line on standard error; the caller exits with kExitBadInput.
#include <optional>
#include <string>

#include "cli/commands.h"
#include "config/sweep_spec.h"
#include "plan/point.h"

namespace ks::cli {

struct LoadedSweep {
  SweepSpec spec;
  Plan plan;
};

std::optional<LoadedSweep> load_and_plan(const std::string& sweep_file, const PlanArguments& args, bool print_errors = true);
// The same from text already read (status re-plans the text stored in a results file).
std::optional<LoadedSweep> plan_text(const std::string& text, const std::string& path, bool print_errors = true);

}  // namespace ks::cli
