#pragma once
// The plan's points made one at a time, in plan order, and never stored: a sweep of ten million
// points is planned, counted and printed in the memory of one point. A point's parameters and id
// are computed when it is reached; a repeated point is recognised by asking the sources before it
// (the earlier kernel blocks, the earlier positions of its own grid, the earlier include entries)
// whether they hold it, not by remembering every id seen.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "config/sweep_spec.h"
#include "kernels/kernel.h"
#include "plan/point.h"

namespace ks {

// Sees each point of a plan in order, with the number of its group (the modes of one shape,
// numbered from 0 in plan order); returns false to stop the enumeration.
using PointVisitor = std::function<bool(Point& point, std::size_t group)>;

class PointEnumerator {
 public:
  // Resolves every block against the registry and checks what can be checked before a point exists
  // (kernel, implementations, modes, zip groups, the keys of fixed, include and exclude); throws
  // SweepFileError. `spec` and `registry` must outlive the enumerator.
  PointEnumerator(const SweepSpec& spec, const Registry& registry);
  ~PointEnumerator();
  PointEnumerator(const PointEnumerator&) = delete;
  PointEnumerator& operator=(const PointEnumerator&) = delete;

  // Points before exclude rules and repeats, saturating at UINT64_MAX: what --max-points is held
  // against before anything is made.
  std::uint64_t upper_bound() const;

  // Visits every point of the plan in plan order (make_plan says which), index and id set. The
  // kernel's validator runs on each parameter combination that keeps a point; a refusal, or a
  // required parameter left without a value, throws SweepFileError when its point is reached.
  void for_each(const PointVisitor& visit);

  // How many points for_each visits, with the same checks. Grids that no exclude rule, validator or
  // repeat can thin are counted by multiplying, without making their points.
  std::uint64_t count();

  // The points of the group a point's source names (its modes, in plan order), made again: the same
  // points, ids and sources as for_each made, their index 0. Answers only after a for_each or count
  // has walked past the group (repeats of earlier include entries are known from that walk), which
  // is how a run's rank 0 uses it: it walks the plan once, keeps each group's source, and makes a
  // group's points when it hands them out.
  std::vector<Point> group_at(const PointSource& source) const;

 private:
  struct Block;
  class Walk;
  std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace ks
