#include "plan/plan.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>

#include <fmt/format.h>

#include "common/digest.h"

namespace ks {
namespace {

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
// cost exceeds another's by more than one group's. Returns, per group, whether `shard_index` has it.
std::vector<bool> deal_groups(const std::vector<double>& cost, std::size_t shard_index, std::size_t shard_count) {
  std::vector<std::size_t> order(cost.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  using Load = std::pair<double, std::size_t>;  // (cost so far, shard)
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> shards;
  for (std::size_t s = 0; s < shard_count; ++s) shards.push({0.0, s});
  std::vector<bool> kept(cost.size(), false);
  for (std::size_t g : order) {
    auto [load, s] = shards.top();
    shards.pop();
    kept[g] = s == shard_index;
    shards.push({load + cost[g], s});
  }
  return kept;
}

// The points of shard `shard_index` that `keep` keeps, renumbered from 0, groups in plan order: for a
// shard, a first pass costs the groups and a second visits the points of the groups dealt to it.
// Memory: a cost per group.
void for_each_kept_point(PointEnumerator& points, const Registry& registry, const ProtocolSpec& protocol,
                         const PlanOptions& options, const PointVisitor& visit) {
  std::vector<bool> shard_has;  // per group
  if (options.shard_count > 1) {
    std::vector<double> cost;
    points.for_each([&](Point& point, std::size_t group) {
      if (group == cost.size()) cost.push_back(0);
      cost[group] += estimated_seconds(point, registry, protocol);
      return true;
    });
    shard_has = deal_groups(cost, options.shard_index, options.shard_count);
  }
  std::size_t index = 0, groups = 0;
  std::optional<std::size_t> last_group;
  points.for_each([&](Point& point, std::size_t group) {
    if ((options.shard_count > 1 && !shard_has[group]) || (options.keep && !options.keep(point))) return true;
    if (last_group != group) ++groups;
    last_group = group;
    point.index = index++;
    return visit(point, groups - 1);
  });
}

void check_shard(const PlanOptions& options) {
  if (options.shard_count == 0 || options.shard_index >= options.shard_count)
    throw PlanError(fmt::format("shard {}/{}: need 0 <= i < N", options.shard_index, options.shard_count));
}

// Refuses a spec larger than --max-points before anything is made.
void check_limit(const SweepSpec& spec, const PointEnumerator& points, const PlanOptions& options) {
  const std::uint64_t upper_bound = points.upper_bound();
  if (upper_bound <= options.max_points) return;
  throw PlanError(fmt::format(
      "sweep '{}' expands to {}{} points before exclude rules, more than the limit of {}: shrink the grid or raise "
      "--max-points",
      spec.name, upper_bound == std::numeric_limits<std::uint64_t>::max() ? "at least " : "", upper_bound,
      options.max_points));
}

}  // namespace

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

std::uint64_t count_points_upper_bound(const SweepSpec& spec, const Registry& registry) {
  return PointEnumerator(spec, registry).upper_bound();
}

void for_each_point(const SweepSpec& spec, const Registry& registry, const PlanOptions& options,
                    const PointVisitor& visit) {
  PointEnumerator points(spec, registry);
  for_each_point(points, spec, registry, options, visit);
}

void for_each_point(PointEnumerator& points, const SweepSpec& spec, const Registry& registry,
                    const PlanOptions& options, const PointVisitor& visit) {
  check_shard(options);
  check_limit(spec, points, options);
  if (options.shard_count == 1 && !options.keep) return points.for_each(visit);
  for_each_kept_point(points, registry, spec.protocol, options, visit);
}

std::uint64_t count_points(const SweepSpec& spec, const Registry& registry, const PlanOptions& options) {
  check_shard(options);
  PointEnumerator points(spec, registry);
  check_limit(spec, points, options);
  if (options.shard_count == 1 && !options.keep) return points.count();
  std::uint64_t count = 0;
  for_each_kept_point(points, registry, spec.protocol, options, [&](Point&, std::size_t) { return ++count; });
  return count;
}

Plan make_plan(const SweepSpec& spec, const Registry& registry, const PlanOptions& options) {
  Plan plan;
  for_each_point(spec, registry, options, [&plan](Point& point, std::size_t group) {
    if (group == plan.groups.size()) plan.groups.push_back({point.index, point.index});
    plan.groups.back().last = point.index + 1;
    plan.points.push_back(std::move(point));
    return true;
  });
  return plan;
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

std::string shard_text(std::uint64_t index, std::uint64_t count) {
  return count > 1 ? fmt::format("{}/{}", index, count) : "";
}

}  // namespace ks
