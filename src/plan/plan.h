#pragma once
// SweepSpec -> Plan: product of the grid axes (zipped axes advance together), include, exclude;
// deterministic order; shards.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "config/sweep_spec.h"
#include "kernels/kernel.h"
#include "plan/point.h"
#include "plan/point_enumerator.h"

namespace ks {

struct PlanOptions {
  std::uint64_t max_points = 100'000'000;  // refused before expansion when the grid is larger
  // --shard i/N keeps shard i of N: the plan's groups (the modes of a shape) dealt to N shards of
  // about equal estimated cost (make_plan). The N shards partition the plan exactly.
  std::size_t shard_index = 0;
  std::size_t shard_count = 1;
  // The points of the plan (of the shard) to keep (--where), renumbered and regrouped as a shard is:
  // the kept modes of one shape stay one group. Every point when empty.
  std::function<bool(const Point&)> keep;
};

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Counts the points a spec would expand to without expanding it (before exclude and deduplication;
// saturates at UINT64_MAX). A block that lists no implementations or modes counts all of its
// kernel's, which is why the registry is needed.
std::uint64_t count_points_upper_bound(const SweepSpec& spec, const Registry& registry);

// Consecutive points of one shape_key (the modes of one shape) as groups: what make_plan fills in,
// and what a plan thinned by --resume is regrouped with.
std::vector<Plan::Group> group_points(const std::vector<Point>& points);

// Visits the points make_plan returns, in its order, each with its group's number in the plan, one
// at a time: memory does not grow with the plan (a shard keeps a cost per group). Stops when `visit`
// returns false. Throws as make_plan does.
void for_each_point(const SweepSpec& spec, const Registry& registry, const PlanOptions& options,
                    const PointVisitor& visit);
// The same through an enumerator the caller keeps (made from `spec` and `registry`), which can then
// make a group's points again (PointEnumerator::group_at).
void for_each_point(PointEnumerator& points, const SweepSpec& spec, const Registry& registry,
                    const PlanOptions& options, const PointVisitor& visit);

// How many points make_plan returns, with its checks, without making them where it can help it.
std::uint64_t count_points(const SweepSpec& spec, const Registry& registry, const PlanOptions& options);

// Order: kernel blocks in file order; in each, the grid product (grid axes in file order, the last
// varying fastest; a zip group advances as one axis at the position of the earliest of its axes),
// then the include entries; for each parameter combination every implementation in listed order,
// and within it every mode in listed order. Parameters: grid or include values, then fixed, then
// the kernel's defaults. A block without grid axes contributes only its include entries. Exclude
// rules apply to every point, include entries too. A repeated point (same id) keeps its first place.
// Point::index is the position in the returned plan (renumbered in a shard). Throws SweepFileError
// (unknown kernel, implementation, mode or parameter; missing required parameter; the kernel's
// validate refusing a combination that keeps a point) and PlanError (too many points, bad shard).
Plan make_plan(const SweepSpec& spec, const Registry& registry, const PlanOptions& options = {});

// Parses "i/N" (0 <= i < N). Throws PlanError.
void parse_shard(const std::string& text, PlanOptions& options);
// The text parse_shard takes for shard `index` of `count`: "i/N"; empty for the whole plan (count 1).
std::string shard_text(std::uint64_t index, std::uint64_t count);

}  // namespace ks
