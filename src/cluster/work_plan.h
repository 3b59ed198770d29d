#pragma once
// The plan as rank 0 of a run holds it: not its points but what it takes to make them again. Per
// group (the modes of one shape), where its points come from in the sweep file and the plan index
// of its first point; per point, two bits: measured before (a resume skips it) and recorded
// `skipped` before. A group's points are made again when rank 0 hands them out. That is about 25
// bytes a group, where the points themselves took 400 bytes or more: a plan of ten million points
// fits in rank 0's memory beside everything else.
//
// A protocol's `repetitions` measures every point several times, round after round: the plan's
// measurements are its points once per repetition, measurement r * points + i being repetition r of
// point i, and its groups likewise (group r * groups + g). Handed out in that order, a point's
// repetitions lie a whole round apart, never back to back.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster/work_queue.h"
#include "common/huge_pages.h"
#include "common/point_id_set.h"
#include "kernels/kernel.h"
#include "plan/point.h"

namespace ks {

class WorkPlan {
 public:
  // The points of the group that `source` names, as the plan has them: in plan order, without the
  // points the plan leaves out (--where), their index not set.
  using GroupMaker = std::function<std::vector<Point>(const PointSource&)>;

  WorkPlan(const Registry& registry, GroupMaker make_group, std::int64_t repetitions = 1);

  // The plan's points, in plan order, each once; `group` numbers groups from 0 as the plan does.
  void add(const Point& point, std::size_t group);
  // Room for this many points, set aside before they are added.
  void reserve(std::uint64_t points);
  // Called once every point is added: makes the measurements of the further repetitions and gives
  // back what growing the arrays left unused.
  void seal();
  // A resume, once the plan is sealed: marks the measurements whose keys (`keys`, each with its
  // measurement's index: add_repetition_keys) `passed` holds as measured before, and the points whose
  // keys `skipped` holds as recorded `skipped` before. The plan's keys are sorted (in place) and
  // walked beside the sets' in one pass.
  void mark_before(PositionedKeys& keys, const PointIdSet& passed, const PointIdSet& skipped);

  std::uint64_t size() const { return measured_before_.size(); }  // measurements: points x repetitions
  std::uint64_t points() const { return skipped_before_.size(); }
  std::int64_t repetitions() const { return repetitions_; }
  std::uint64_t measured_before() const { return measured_; }
  std::uint64_t to_measure() const { return size() - measured_; }
  std::size_t group_count() const { return groups_.size() * static_cast<std::size_t>(repetitions_); }
  bool any_in_python() const { return any_in_python_; }

  // The groups (of every repetition) that hold a measurement to make, in order: round after round.
  std::vector<std::size_t> groups_to_measure() const;
  // What the group needs of the ranks: a GPU (a cuda implementation), and for a collective a gang (its
  // group_size, placement).
  GroupNeeds needs(std::size_t group) const;
  // The group's points not measured before in its repetition, made again, in plan order, their
  // index (the measurement's) and repetition set.
  std::vector<Point> points_to_measure(std::size_t group) const;
  // Whether the point's latest row in the results file is `skipped` (point.index says which point).
  bool skipped_before(const Point& point) const { return skipped_before_[point.index % points()]; }

 private:
  struct Group {
    PointSource source;
    std::uint64_t first_index = 0;
  };
  const Registry* registry_;
  GroupMaker make_group_;
  LargeVector<Group> groups_;
  std::vector<bool> needs_gpu_;        // by group
  std::vector<bool> measured_before_;  // by measurement index
  std::vector<bool> skipped_before_;   // by plan index
  // The groups of collectives, in group order, with their gang's needs (few: the others need none).
  std::vector<std::pair<std::size_t, GroupNeeds>> gangs_;
  std::int64_t repetitions_ = 1;
  std::uint64_t measured_ = 0;
  bool any_in_python_ = false;
  struct {
    std::string kernel, implementation;
    bool needs_gpu = false, in_python = false, collective = false;
  } last_;  // the implementation of the last group added
};

}  // namespace ks
