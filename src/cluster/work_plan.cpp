#include "cluster/work_plan.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "cluster/workers.h"
#include "kernels/nccl/collective.h"

namespace ks {

WorkPlan::WorkPlan(const Registry& registry, GroupMaker make_group, std::int64_t repetitions)
    : registry_(&registry), make_group_(std::move(make_group)), repetitions_(repetitions) {
  if (repetitions < 1) throw std::invalid_argument(fmt::format("WorkPlan: {} repetitions", repetitions));
}

void WorkPlan::add(const Point& point, std::size_t group) {
  if (point.index != points())
    throw std::logic_error(fmt::format("WorkPlan: point {} added as the plan's point {}", point.index, points()));
  if (group == groups_.size()) {
    groups_.push_back({point.source, point.index});
    // Groups come in long runs of one implementation: it is looked up when it changes.
    if (point.kernel != last_.kernel || point.implementation != last_.implementation)
      last_ = {point.kernel, point.implementation, ks::needs_gpu(*registry_, point), runs_in_python(*registry_, point),
               collective::find_collective(point.kernel) != nullptr};
    needs_gpu_.push_back(last_.needs_gpu);
    if (last_.collective) {
      const Parameters params(point.params);
      gangs_.push_back({groups_.size() - 1, GroupNeeds{last_.needs_gpu, true, params.get<int>("group_size"),
                                                       params.get<std::string>("placement") == "same-node"}});
    }
    any_in_python_ = any_in_python_ || last_.in_python;
  } else if (group + 1 != groups_.size()) {
    throw std::logic_error(
        fmt::format("WorkPlan: point {} of group {} follows group {}", point.index, group, groups_.size() - 1));
  }
  measured_before_.push_back(false);
  skipped_before_.push_back(false);
}

void WorkPlan::reserve(std::uint64_t points) {
  groups_.reserve(points);  // a point's group may be its own
  needs_gpu_.reserve(points);
  measured_before_.reserve(points);
  skipped_before_.reserve(points);
}

void WorkPlan::seal() {
  measured_before_.resize(points() * static_cast<std::uint64_t>(repetitions_), false);
  groups_.shrink_to_fit();
  needs_gpu_.shrink_to_fit();
  measured_before_.shrink_to_fit();
  skipped_before_.shrink_to_fit();
}

void WorkPlan::mark_before(PositionedKeys& plan, const PointIdSet& passed, const PointIdSet& skipped) {
  if (plan.size() != size())
    throw std::logic_error(fmt::format("WorkPlan: {} keys given for a plan of {} points", plan.size(), size()));
  sort_by_key(plan);
  // Each set's keys found among the plan's, both sorted: calls mark(position) for each in both.
  const auto walk = [&plan](const PointKeys& set, auto&& mark) {
    for (std::size_t i = 0, j = 0; i < plan.size() && j < set.size();) {
      if (PointKeyLess()(plan[i].first, set[j])) ++i;
      else if (PointKeyLess()(set[j], plan[i].first)) ++j;
      else mark(plan[i++].second);
    }
  };
  walk(passed.sorted(), [this](std::uint64_t position) {
    if (!measured_before_[position]) ++measured_;
    measured_before_[position] = true;
  });
  walk(skipped.sorted(), [this](std::uint64_t position) {
    if (position < points()) skipped_before_[position] = true;  // a point's, from its first repetition's key
  });
}

GroupNeeds WorkPlan::needs(std::size_t group) const {
  const std::size_t g = group % groups_.size();
  const auto at = std::lower_bound(gangs_.begin(), gangs_.end(), g,
                                   [](const auto& gang, std::size_t wanted) { return gang.first < wanted; });
  if (at != gangs_.end() && at->first == g) return at->second;
  return GroupNeeds{needs_gpu_[g], false, 1, false};
}

std::vector<std::size_t> WorkPlan::groups_to_measure() const {
  std::vector<std::size_t> out;
  for (std::int64_t r = 0; r < repetitions_; ++r) {
    const std::uint64_t round = static_cast<std::uint64_t>(r) * points();
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const std::uint64_t last = g + 1 < groups_.size() ? groups_[g + 1].first_index : points();
      for (std::uint64_t i = groups_[g].first_index; i < last; ++i)
        if (!measured_before_[round + i]) {
          out.push_back(static_cast<std::size_t>(r) * groups_.size() + g);
          break;
        }
    }
  }
  return out;
}

std::vector<Point> WorkPlan::points_to_measure(std::size_t group) const {
  const std::size_t g = group % groups_.size();
  const auto repetition = static_cast<std::int32_t>(group / groups_.size());
  const std::uint64_t first = groups_.at(g).first_index;
  const std::uint64_t last = g + 1 < groups_.size() ? groups_[g + 1].first_index : points();
  const std::uint64_t round = static_cast<std::uint64_t>(repetition) * points();
  std::vector<Point> points = make_group_(groups_[g].source);
  if (points.size() != last - first)
    throw std::logic_error(
        fmt::format("group {} of the plan was made again with {} points, not {}", g, points.size(), last - first));
  std::vector<Point> out;
  for (std::size_t k = 0; k < points.size(); ++k) {
    if (measured_before_[round + first + k]) continue;
    points[k].index = round + first + k;
    points[k].repetition = repetition;
    out.push_back(std::move(points[k]));
  }
  return out;
}

}  // namespace ks
