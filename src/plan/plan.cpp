#include "plan/plan.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <unordered_set>

#include <fmt/format.h>

#include "common/digest.h"

namespace ks {
namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

// Counts saturate instead of wrapping: a grid of 2^70 points must still read as "too many".
std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return b > kSaturated - a ? kSaturated : a + b; }

std::string block_key(std::size_t block_index) { return fmt::format("kernels[{}]", block_index); }

const KernelSpec& find_kernel(const KernelBlock& block, std::size_t block_index, const Registry& registry) {
  const KernelSpec* kernel = registry.find(block.kernel);
  if (!kernel) {
    throw SweepFileError(block.where, block_key(block_index) + ".kernel",
                         fmt::format("unknown kernel '{}' (known: {})", block.kernel, fmt::join(registry.names(), ", ")));
  }
  return *kernel;
}

// The block's implementations, or all of the kernel's when the block lists none.
std::vector<std::string> resolve_implementations(const KernelBlock& block, std::size_t block_index,
                                                 const KernelSpec& kernel) {
  if (block.implementations.empty()) {
    std::vector<std::string> all;
    for (const auto& implementation : kernel.implementations) all.push_back(implementation.name);
    return all;
  }
  for (const auto& name : block.implementations)
    if (!kernel.implementation(name))
      throw SweepFileError(block.where, block_key(block_index) + ".implementations",
                           fmt::format("kernel '{}' has no implementation '{}'", kernel.name, name));
  return block.implementations;
}

// The block's modes, or all of the kernel's when the block lists none.
std::vector<std::string> resolve_modes(const KernelBlock& block, std::size_t block_index, const KernelSpec& kernel) {
  if (block.modes.empty()) return kernel.modes;
  for (const auto& mode : block.modes)
    if (!kernel.has_mode(mode))
      throw SweepFileError(block.where, block_key(block_index) + ".modes",
                           fmt::format("kernel '{}' has no mode '{}'", kernel.name, mode));
  return block.modes;
}

// One digit of the grid odometer: a single axis, or a zip group whose axes advance together.
struct Slot {
  std::vector<const Axis*> axes;
  std::size_t length = 0;
};

// The grid's slots in odometer order: grid axes in file order, a zip group at the position of the
// earliest of its axes in the grid.
std::vector<Slot> grid_slots(const KernelBlock& block, std::size_t block_index) {
  const std::string zip_key = block_key(block_index) + ".zip";
  std::map<std::string, const Axis*> axis_by_name;
  for (const auto& axis : block.grid) axis_by_name[axis.name] = &axis;

  std::map<std::string, std::size_t> group_of_axis;
  for (std::size_t g = 0; g < block.zip.size(); ++g) {
    for (const auto& name : block.zip[g]) {
      const auto axis = axis_by_name.find(name);
      if (axis == axis_by_name.end())
        throw SweepFileError(block.where, zip_key, fmt::format("'{}' is not a grid axis", name));
      if (!group_of_axis.emplace(name, g).second)
        throw SweepFileError(block.where, zip_key, fmt::format("axis '{}' is zipped twice", name));
      const Axis& first = *axis_by_name.at(block.zip[g].front());
      if (axis->second->values.size() != first.values.size())
        throw SweepFileError(axis->second->where, zip_key,
                             fmt::format("zipped axes '{}' ({} values) and '{}' ({} values) differ in length",
                                         first.name, first.values.size(), name, axis->second->values.size()));
    }
  }

  std::vector<Slot> slots;
  std::map<std::size_t, std::size_t> slot_of_group;
  for (const auto& axis : block.grid) {
    const auto group = group_of_axis.find(axis.name);
    if (group == group_of_axis.end()) {
      slots.push_back(Slot{{&axis}, axis.values.size()});
      continue;
    }
    const auto [placed, is_new] = slot_of_group.emplace(group->second, slots.size());
    if (is_new) slots.push_back(Slot{{}, axis.values.size()});
    slots[placed->second].axes.push_back(&axis);
  }
  return slots;
}

// Points of the grid before exclude: the product of the slot lengths. A block without grid axes
// contributes no grid point (its points come from include).
std::uint64_t grid_combinations(const std::vector<Slot>& slots) {
  if (slots.empty()) return 0;
  std::uint64_t count = 1;
  for (const auto& slot : slots) count = saturating_multiply(count, slot.length);
  return count;
}

// Moves the odometer one step, the last slot fastest. False once every combination was visited.
bool advance(std::vector<std::size_t>& position, const std::vector<Slot>& slots) {
  for (std::size_t k = slots.size(); k-- > 0;) {
    if (++position[k] < slots[k].length) return true;
    position[k] = 0;
  }
  return false;
}

Json slot_values(const std::vector<Slot>& slots, const std::vector<std::size_t>& position) {
  Json values = Json::object();
  for (std::size_t k = 0; k < slots.size(); ++k)
    for (const Axis* axis : slots[k].axes) values[axis->name] = axis->values[position[k]];
  return values;
}

void require_known_parameters(const Json& values, const KernelSpec& kernel, const KernelBlock& block,
                              const std::string& key) {
  for (const auto& [name, value] : values.items())
    if (!kernel.parameter(name))
      throw SweepFileError(block.where, key + "." + name, fmt::format("kernel '{}' has no parameter '{}'", kernel.name, name));
}

// Does a rule's value (one value, or a list of values) accept the point's value?
bool rule_value_matches(const Json& expected, const Json& actual) {
  if (!expected.is_array()) return expected == actual;
  for (const auto& candidate : expected)
    if (candidate == actual) return true;
  return false;
}

bool rule_matches(const Json& rule, const Point& point) {
  for (const auto& [key, expected] : rule.items()) {
    if (key == "implementation") {
      if (!rule_value_matches(expected, point.implementation)) return false;
    } else if (key == "mode") {
      if (!rule_value_matches(expected, point.mode)) return false;
    } else if (!point.params.contains(key) || !rule_value_matches(expected, point.params.at(key))) {
      return false;
    }
  }
  return true;
}

// Expands the kernel blocks into points, in plan order; drops excluded and repeated points.
class PlanBuilder {
 public:
  explicit PlanBuilder(const Registry& registry) : registry_(registry) {}

  void add_block(const KernelBlock& block, std::size_t block_index) {
    const KernelSpec& kernel = find_kernel(block, block_index, registry_);
    const Context context{block, block_index, kernel, resolve_implementations(block, block_index, kernel),
                          resolve_modes(block, block_index, kernel)};
    check_block_keys(context);

    const std::vector<Slot> slots = grid_slots(block, block_index);
    if (grid_combinations(slots) > 0) {
      std::vector<std::size_t> position(slots.size(), 0);
      do add_combination(context, slot_values(slots, position)); while (advance(position, slots));
    }
    for (const auto& entry : block.include) add_combination(context, entry);
  }

  Plan take() {
    Plan plan;
    plan.points = std::move(points_);
    plan.groups = group_points(plan.points);
    return plan;
  }

 private:
  struct Context {
    const KernelBlock& block;
    std::size_t block_index;
    const KernelSpec& kernel;
    std::vector<std::string> implementations;
    std::vector<std::string> modes;
  };

  // The parser checks these too; the planner repeats the cheap checks so that a SweepSpec built in
  // code (tests, tools) cannot produce points of parameters the kernel does not have.
  static void check_block_keys(const Context& context) {
    const std::string key = block_key(context.block_index);
    require_known_parameters(context.block.fixed, context.kernel, context.block, key + ".fixed");
    for (std::size_t j = 0; j < context.block.include.size(); ++j) {
      const std::string include_key = fmt::format("{}.include[{}]", key, j);
      if (!context.block.include[j].is_object())
        throw SweepFileError(context.block.where, include_key, "must be a map of parameter to value");
      require_known_parameters(context.block.include[j], context.kernel, context.block, include_key);
    }
    for (std::size_t j = 0; j < context.block.exclude.size(); ++j) {
      const Json& rule = context.block.exclude[j];
      const std::string rule_key = fmt::format("{}.exclude[{}]", key, j);
      if (!rule.is_object() || rule.empty())
        throw SweepFileError(context.block.where, rule_key, "must be a non-empty map of key to value or list of values");
      for (const auto& [name, value] : rule.items())
        if (name != "implementation" && name != "mode" && !context.kernel.parameter(name))
          throw SweepFileError(context.block.where, rule_key + "." + name,
                               fmt::format("not a parameter of kernel '{}', 'implementation' or 'mode'", context.kernel.name));
    }
  }

  // Every parameter of the kernel: the given values, then the block's fixed values, then defaults.
  static Json complete_parameters(const Context& context, const Json& given) {
    Json params = Json::object();
    for (const auto& spec : context.kernel.parameters) {
      if (given.contains(spec.name)) {
        params[spec.name] = given.at(spec.name);
      } else if (context.block.fixed.contains(spec.name)) {
        params[spec.name] = context.block.fixed.at(spec.name);
      } else if (!spec.default_value.is_null()) {
        params[spec.name] = spec.default_value;
      } else {
        throw SweepFileError(context.block.where, block_key(context.block_index) + "." + spec.name,
                             fmt::format("required parameter of kernel '{}' is missing", context.kernel.name));
      }
    }
    return params;
  }

  // The kernel's cross-parameter constraints; its problem comes back as "key: what is wrong".
  static void validate(const Context& context, const Json& params) {
    if (!context.kernel.validate) return;
    const auto problem = context.kernel.validate(Parameters(params));
    if (!problem) return;
    std::string key = block_key(context.block_index);
    std::string what = *problem;
    if (const auto colon = problem->find(": "); colon != std::string::npos) {
      key += "." + problem->substr(0, colon);
      what = problem->substr(colon + 2);
    }
    throw SweepFileError(context.block.where, key, fmt::format("{} (parameters {})", what, params.dump()));
  }

  bool excluded(const Context& context, const Point& point) const {
    for (const auto& rule : context.block.exclude)
      if (rule_matches(rule, point)) return true;
    return false;
  }

  // One parameter combination: a point per implementation and mode. The kernel's validator runs
  // only for combinations that keep a point, so an exclude rule can remove combinations it refuses.
  void add_combination(const Context& context, const Json& given) {
    const Json params = complete_parameters(context, given);
    bool validated = false;
    for (const auto& implementation : context.implementations) {
      for (const auto& mode : context.modes) {
        Point point;
        point.kernel = context.kernel.name;
        point.implementation = implementation;
        point.mode = mode;
        point.params = params;
        point.timeout_s = context.block.timeout_s;
        if (excluded(context, point)) continue;
        if (!validated) validate(context, params);
        validated = true;
        point.id = point_id(point);
        if (!seen_ids_.insert(point.id).second) continue;  // the first occurrence keeps its place
        point.index = points_.size();
        points_.push_back(std::move(point));
      }
    }
  }

  const Registry& registry_;
  std::vector<Point> points_;
  std::unordered_set<std::string> seen_ids_;
};

// What one point costs to measure, in seconds, for dealing groups to shards: the protocol's warm-up
// and repetition windows, which every point spends whatever its size, and ten calls of the kernel
// estimated from its work at nominal rates (100 TFLOP/s, 2 TB/s; only the ratios between points
// matter). A kernel that declares no work counts the windows alone.
double estimated_seconds(const Point& point, const Registry& registry, const ProtocolSpec& protocol) {
  double seconds = (protocol.warmup_ms + protocol.rep_ms) / 1e3;
  const KernelSpec* kernel = registry.find(point.kernel);
  if (kernel && kernel->has_mode(point.mode)) {
    const Work work = kernel->work_of(point.params, point.mode);
    if (std::isfinite(work.flops) && std::isfinite(work.bytes) && work.flops >= 0 && work.bytes >= 0)
      seconds += 10 * (work.flops / 1e14 + work.bytes / 2e12);
  }
  return seconds;
}

// Deals the groups to shards by estimated cost: the costliest first (groups of equal cost in plan
// order), each to the shard with the least so far (the lower shard on a tie). Every shard computes
// the same deal from the same sweep file, the N shards partition the plan exactly, and no shard's
// cost exceeds another's by more than one group's. Keeps shard `shard_index`, its groups in plan
// order, its points renumbered so that points[i].index == i again.
Plan select_shard(const Plan& full, const Registry& registry, const ProtocolSpec& protocol, std::size_t shard_index,
                  std::size_t shard_count) {
  std::vector<double> cost(full.groups.size(), 0);
  for (std::size_t g = 0; g < full.groups.size(); ++g)
    for (std::size_t i = full.groups[g].first; i < full.groups[g].last; ++i)
      cost[g] += estimated_seconds(full.points[i], registry, protocol);
  std::vector<std::size_t> order(full.groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  using Load = std::pair<double, std::size_t>;  // (cost so far, shard)
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> shards;
  for (std::size_t s = 0; s < shard_count; ++s) shards.push({0.0, s});
  std::vector<bool> kept(full.groups.size(), false);
  for (std::size_t g : order) {
    auto [load, s] = shards.top();
    shards.pop();
    kept[g] = s == shard_index;
    shards.push({load + cost[g], s});
  }
  Plan shard;
  for (std::size_t g = 0; g < full.groups.size(); ++g) {
    if (!kept[g]) continue;
    for (std::size_t i = full.groups[g].first; i < full.groups[g].last; ++i) {
      shard.points.push_back(full.points[i]);
      shard.points.back().index = shard.points.size() - 1;
    }
  }
  shard.groups = group_points(shard.points);
  return shard;
}

void check_shard(const PlanOptions& options) {
  if (options.shard_count == 0 || options.shard_index >= options.shard_count)
    throw PlanError(fmt::format("shard {}/{}: need 0 <= i < N", options.shard_index, options.shard_count));
}

}  // namespace

std::uint64_t count_points_upper_bound(const SweepSpec& spec, const Registry& registry) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < spec.kernels.size(); ++i) {
    const KernelBlock& block = spec.kernels[i];
    const KernelSpec& kernel = find_kernel(block, i, registry);
    const std::uint64_t combinations = saturating_add(grid_combinations(grid_slots(block, i)), block.include.size());
    const std::uint64_t variants = saturating_multiply(resolve_implementations(block, i, kernel).size(),
                                                       resolve_modes(block, i, kernel).size());
    total = saturating_add(total, saturating_multiply(combinations, variants));
  }
  return total;
}

std::vector<Plan::Group> group_points(const std::vector<Point>& points) {
  std::vector<Plan::Group> groups;
  std::string previous_key;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::string key = points[i].shape_key();
    if (groups.empty() || key != previous_key) groups.push_back({i, i});
    groups.back().last = i + 1;
    previous_key = std::move(key);
  }
  return groups;
}

Plan make_plan(const SweepSpec& spec, const Registry& registry, const PlanOptions& options) {
  check_shard(options);
  const std::uint64_t upper_bound = count_points_upper_bound(spec, registry);
  if (upper_bound > options.max_points) {
    throw PlanError(fmt::format(
        "sweep '{}' expands to {}{} points before exclude rules, more than the limit of {}: shrink the grid or raise "
        "--max-points",
        spec.name, upper_bound == kSaturated ? "at least " : "", upper_bound, options.max_points));
  }
  PlanBuilder builder(registry);
  for (std::size_t i = 0; i < spec.kernels.size(); ++i) builder.add_block(spec.kernels[i], i);
  Plan plan = builder.take();
  if (options.shard_count == 1) return plan;
  return select_shard(plan, registry, spec.protocol, options.shard_index, options.shard_count);
}

void parse_shard(const std::string& text, PlanOptions& options) {
  const auto fail = [&text]() -> PlanError {
    return PlanError(fmt::format("--shard '{}': expected i/N with integers 0 <= i < N", text));
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw fail();
  const auto parse_part = [&](std::size_t begin, std::size_t end, std::size_t& value) {
    const char* first = text.data() + begin;
    const char* last = text.data() + end;
    const auto [stop, error] = std::from_chars(first, last, value);
    if (first == last || error != std::errc{} || stop != last) throw fail();
  };
  std::size_t index = 0, count = 0;
  parse_part(0, slash, index);
  parse_part(slash + 1, text.size(), count);
  if (count == 0 || index >= count) throw fail();
  options.shard_index = index;
  options.shard_count = count;
}

}  // namespace ks
