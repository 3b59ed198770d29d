#pragma once
// The plan as rank 0 of a run holds it: not its points but what it takes to make them again. Per
// group (the modes of one shape), where its points come from in the sweep file and the plan index
// of its first point; per point, two bits: measured before (a resume skips it) and recorded
// `skipped` before. A group's points are made again when rank 0 hands them out. That is about 25
// bytes a group, where the points themselves took 400 bytes or more: a plan of ten million points
// fits in rank 0's memory beside everything else.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/point_id_set.h"
#include "kernels/kernel.h"
#include "plan/point.h"

namespace ks {

class WorkPlan {
 public:
  // The points of the group that `source` names, as the plan has them: in plan order, without the
  // points the plan leaves out (--where), their index not set.
  using GroupMaker = std::function<std::vector<Point>(const PointSource&)>;

  WorkPlan(const Registry& registry, GroupMaker make_group);

  // The plan's points, in plan order, each once; `group` numbers groups from 0 as the plan does.
  void add(const Point& point, std::size_t group);
  // Called once every point is added: gives back what growing the arrays left unused.
  void seal();
  // A resume, once the plan is sealed: marks the points whose keys (`keys`, each point's with its
  // index) `passed` holds as measured before, and those `skipped` holds as recorded `skipped` before.
  // The plan's keys are sorted (in place) and walked beside the sets' in one pass.
  void mark_before(PositionedKeys& keys, const PointIdSet& passed, const PointIdSet& skipped);

  std::uint64_t size() const { return measured_before_.size(); }  // points of the plan
  std::uint64_t measured_before() const { return measured_; }
  std::uint64_t to_measure() const { return size() - measured_; }
  std::size_t group_count() const { return groups_.size(); }
  bool any_in_python() const { return any_in_python_; }

  // The groups that hold a point to measure, in plan order.
  std::vector<std::size_t> groups_to_measure() const;
  // Whether the group's implementation runs on a GPU (a cuda implementation).
  bool needs_gpu(std::size_t group) const { return needs_gpu_[group]; }
  // The group's points not measured before, made again, in plan order, index set.
  std::vector<Point> points_to_measure(std::size_t group) const;
  // Whether the point's latest row in the results file is `skipped` (point.index says which point).
  bool skipped_before(const Point& point) const { return skipped_before_[point.index]; }

 private:
  struct Group {
    PointSource source;
    std::uint64_t first_index = 0;
  };
  const Registry* registry_;
  GroupMaker make_group_;
  std::vector<Group> groups_;
  std::vector<bool> needs_gpu_;        // by group
  std::vector<bool> measured_before_;  // by plan index
  std::vector<bool> skipped_before_;   // by plan index
  std::uint64_t measured_ = 0;
  bool any_in_python_ = false;
  struct {
    std::string kernel, implementation;
    bool needs_gpu = false, in_python = false;
  } last_;  // the implementation of the last group added
};

}  // namespace ks
