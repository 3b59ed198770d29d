#include "cli/sweep_loading.h"

#include <iostream>

#include "config/parse.h"
#include "kernels/kernel.h"
#include "plan/plan.h"

namespace ks::cli {
namespace {

template <typename Load>
std::optional<LoadedSweep> attempt(Load&& load, const PlanArguments& args, bool print_errors) {
  try {
    LoadedSweep out;
    out.spec = load();
    PlanOptions options;
    options.max_points = args.max_points;
    if (!args.shard.empty()) parse_shard(args.shard, options);
    out.plan = make_plan(out.spec, Registry::global(), options);
    return out;
  } catch (const SweepFileError& e) {
    if (print_errors) std::cerr << e.what() << "\n";
  } catch (const PlanError& e) {
    if (print_errors) std::cerr << args.sweep_file << ": " << e.what() << "\n";
  }
  return std::nullopt;
}

}  // namespace

std::optional<LoadedSweep> load_and_plan(const std::string& sweep_file, const PlanArguments& args, bool print_errors) {
  PlanArguments with_file = args;
  with_file.sweep_file = sweep_file;
  return attempt([&] { return load_sweep_file(sweep_file, Registry::global()); }, with_file, print_errors);
}

std::optional<LoadedSweep> plan_text(const std::string& text, const std::string& path, bool print_errors) {
  PlanArguments args;
  args.sweep_file = path;
  return attempt([&] { return parse_sweep_text(text, path, Registry::global()); }, args, print_errors);
}

}  // namespace ks::cli
