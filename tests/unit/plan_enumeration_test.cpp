// The enumerated plan against a reference: every point of every block made and kept in a list, a
// repeated id dropped by remembering the ids seen, which is the plan's definition written the
// plainest way. The enumerator makes the same points, ids, order and groups without storing them.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/parse.h"
#include "plan/plan.h"
#include "plan/point_enumerator.h"
#include "support/kernels.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using testing::builtin_registry;

// The grid's parameter combinations, the last slot fastest; a zip group is one slot, at the place
// of its first axis.
std::vector<Json> reference_grid(const KernelBlock& block) {
  std::vector<std::vector<const Axis*>> slots;
  std::map<std::string, std::size_t> slot_of_zip;
  for (const Axis& axis : block.grid) {
    std::size_t zip = block.zip.size();
    for (std::size_t z = 0; z < block.zip.size(); ++z)
      for (const auto& name : block.zip[z])
        if (name == axis.name) zip = z;
    const std::string key = zip == block.zip.size() ? "axis " + axis.name : "zip " + std::to_string(zip);
    if (!slot_of_zip.contains(key)) {
      slot_of_zip[key] = slots.size();
      slots.emplace_back();
    }
    slots[slot_of_zip[key]].push_back(&axis);
  }
  std::vector<Json> combinations;
  if (slots.empty()) return combinations;
  combinations.push_back(Json::object());
  for (const auto& slot : slots) {
    std::vector<Json> longer;
    for (const Json& before : combinations) {
      for (std::size_t k = 0; k < slot.front()->values.size(); ++k) {
        Json next = before;
        for (const Axis* axis : slot) next[axis->name] = axis->values[k];
        longer.push_back(next);
      }
    }
    combinations = longer;
  }
  return combinations;
}

bool rule_accepts(const Json& expected, const Json& actual) {
  if (!expected.is_array()) return expected == actual;
  for (const Json& value : expected)
    if (value == actual) return true;
  return false;
}

bool excluded(const KernelBlock& block, const Point& point) {
  for (const Json& rule : block.exclude) {
    bool all = true;
    for (const auto& [key, expected] : rule.items()) {
      const Json actual = key == "implementation" ? Json(point.implementation)
                          : key == "mode"         ? Json(point.mode)
                                                  : point.params.value(key, Json());
      all = all && rule_accepts(expected, actual);
    }
    if (all) return true;
  }
  return false;
}

std::vector<Point> reference_plan(const SweepSpec& spec, const Registry& registry) {
  std::vector<Point> points;
  std::set<std::string> seen;
  for (const KernelBlock& block : spec.kernels) {
    const KernelSpec& kernel = *registry.find(block.kernel);
    std::vector<std::string> implementations = block.implementations, modes = block.modes;
    if (implementations.empty())
      for (const auto& implementation : kernel.implementations) implementations.push_back(implementation.name);
    if (modes.empty()) modes = kernel.modes;
    std::vector<Json> combinations = reference_grid(block);
    combinations.insert(combinations.end(), block.include.begin(), block.include.end());
    for (const Json& given : combinations) {
      Json params = Json::object();
      for (const auto& parameter : kernel.parameters)
        params[parameter.name] = given.contains(parameter.name)         ? given[parameter.name]
                                 : block.fixed.contains(parameter.name) ? block.fixed[parameter.name]
                                                                        : parameter.default_value;
      for (const auto& implementation : implementations) {
        for (const auto& mode : modes) {
          Point point;
          point.kernel = kernel.name;
          point.implementation = implementation;
          point.mode = mode;
          point.params = params;
          point.key = point_digest(point);
          if (excluded(block, point) || !seen.insert(point.id()).second) continue;
          point.index = points.size();
          points.push_back(point);
        }
      }
    }
  }
  return points;
}

// Rank 0 of a run keeps a group's source and makes its points again when it hands them out: each
// group made again from the source of its first point is the group, point for point.
void expect_groups_made_again(const SweepSpec& spec, const Plan& plan, const std::string& name) {
  PointEnumerator points(spec, builtin_registry());
  points.count();
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    const std::vector<Point> again = points.group_at(plan.points[plan.groups[g].first].source);
    ASSERT_EQ(again.size(), plan.groups[g].last - plan.groups[g].first) << name << " group " << g;
    for (std::size_t k = 0; k < again.size(); ++k) {
      const Point& original = plan.points[plan.groups[g].first + k];
      EXPECT_EQ(again[k].id(), original.id()) << name << " group " << g;
      EXPECT_EQ(again[k].params, original.params) << name << " group " << g;
      EXPECT_EQ(again[k].timeout_s, original.timeout_s) << name << " group " << g;
      EXPECT_EQ(again[k].source.combination, original.source.combination) << name << " group " << g;
    }
  }
}

void expect_plan_is_the_reference(const SweepSpec& spec, const std::string& name) {
  const std::vector<Point> expected = reference_plan(spec, builtin_registry());
  const Plan plan = make_plan(spec, builtin_registry());
  ASSERT_EQ(plan.points.size(), expected.size()) << name;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(plan.points[i].id(), expected[i].id()) << name << " point " << i;
    EXPECT_EQ(plan.points[i].index, i) << name;
    EXPECT_EQ(plan.points[i].params, expected[i].params) << name << " point " << i;
  }
  std::vector<Plan::Group> groups = group_points(expected);
  ASSERT_EQ(plan.groups.size(), groups.size()) << name;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    EXPECT_EQ(plan.groups[g].first, groups[g].first) << name << " group " << g;
    EXPECT_EQ(plan.groups[g].last, groups[g].last) << name << " group " << g;
  }
  EXPECT_EQ(count_points(spec, builtin_registry(), {}), expected.size()) << name;
  expect_groups_made_again(spec, plan, name);
}

SweepSpec parse(const std::string& text) { return parse_sweep_text(text, "inline.yaml", builtin_registry()); }

TEST(PlanEnumeration, EveryShippedSweepFileGivesTheReferencePlan) {
  std::vector<fs::path> files;
  for (const char* folder : {"configs", "tests/data"})
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(KS_SOURCE_DIR) / folder))
      if (entry.path().extension() == ".yaml" && entry.path().string().find("/bad/") == std::string::npos)
        files.push_back(entry.path());
  ASSERT_GE(files.size(), 8u);
  for (const fs::path& file : files)
    expect_plan_is_the_reference(load_sweep_file(file.string(), builtin_registry()), file.string());
}

TEST(PlanEnumeration, RepeatsAcrossBlocksIncludesZipsAndAxesKeepTheirFirstPlace) {
  const SweepSpec spec = parse(R"(name: repeats
kernels:
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [64, 128, 64], N: [64, 96], K: [32, 32, 48]}
    zip: [[M, K]]
    include: [{M: 128, N: 96, K: 32}, {M: 256, N: 64, K: 32}, {K: 32, N: 64, M: 256}]
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [128, 256, 512], N: [64], K: [32, 48]}
    exclude: [{M: 512, K: 48}]
    include: [{M: 64, N: 96, K: 32}, {M: 1024, N: 64, K: 32}]
  - kernel: noop
    grid: {id: [1, 2, 2, 3]}
  - kernel: noop
    grid: {id: [12, 11, 10]}
  - kernel: noop
    grid: {id: [9, 7, 5, 7, 20]}
  - kernel: gemm
    implementations: [cpu]
    fixed: {N: 64}
    grid: {M: [128, 512, 2048], K: [32, 48]}
)");
  expect_plan_is_the_reference(spec, "repeats");
}

TEST(PlanEnumeration, ExcludedInAnEarlierBlockIsNotARepeatThere) {
  // Block 0 excludes M=128; block 1 has it: the point is block 1's, at block 1's place.
  const SweepSpec spec = parse(R"(name: excluded-earlier
kernels:
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [64, 128], N: [64], K: [32]}
    exclude: [{M: 128}]
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [256, 128, 64], N: [64], K: [32]}
)");
  expect_plan_is_the_reference(spec, "excluded-earlier");
  EXPECT_EQ(make_plan(spec, builtin_registry()).points.size(), 3u);
}

TEST(PlanEnumeration, AVisitorThatStopsEndsTheEnumeration) {
  const SweepSpec spec =
      parse("name: stop\nkernels:\n  - kernel: noop\n    grid: {id: {from: 1, to: 1000, step: 1}}\n");
  std::size_t seen = 0;
  for_each_point(spec, builtin_registry(), {}, [&](Point& point, std::size_t group) {
    EXPECT_EQ(point.index, seen);
    EXPECT_EQ(group, seen);
    return ++seen < 10;
  });
  EXPECT_EQ(seen, 10u);
}

TEST(PlanEnumeration, AGroupMadeAgainKeepsTheModesThatExcludesAndRepeatsLeave) {
  // Block 1 repeats block 0's forward point of 64 tokens and excludes backward at 128: its groups
  // made again hold only the modes the plan has.
  const SweepSpec spec = parse(R"(name: made-again
kernels:
  - kernel: rms_norm
    implementations: [cpu]
    modes: [forward]
    grid: {tokens: [64], hidden: [64]}
  - kernel: rms_norm
    implementations: [cpu]
    modes: [forward, backward]
    grid: {tokens: [64, 128], hidden: [64]}
    exclude: [{tokens: 128, mode: backward}]
    include: [{tokens: 64, hidden: 64}, {tokens: 256, hidden: 64}]
)");
  const Plan plan = make_plan(spec, builtin_registry());
  ASSERT_EQ(plan.points.size(), 5u);  // 64 forward; 64 backward, 128 forward; 256 forward and backward
  PointEnumerator points(spec, builtin_registry());
  points.count();
  EXPECT_EQ(points.group_at(plan.points[1].source).size(), 1u);  // 64 tokens: backward only
  EXPECT_EQ(points.group_at(plan.points[2].source).size(), 1u);  // 128 tokens: forward only
  EXPECT_EQ(points.group_at(plan.points[3].source).size(), 2u);  // the second include entry
  EXPECT_EQ(points.group_at({1, 0, 2}).size(), 0u);              // the first include entry repeats the grid
  EXPECT_THROW(points.group_at({1, 0, 4}), std::out_of_range);
  EXPECT_THROW(points.group_at({2, 0, 0}), std::out_of_range);
}

TEST(PlanEnumeration, CountingAGridNothingThinsMakesNoPoint) {
  // 10^9 points counted at once: were they made, this test would not end.
  const SweepSpec spec = parse(
      "name: huge\nkernels:\n  - kernel: gemm\n    implementations: [cpu]\n    modes: [forward]\n    grid:\n"
      "      M: {from: 1, to: 1000, step: 1}\n      N: {from: 1, to: 1000, step: 1}\n      K: {from: 1, to: 1000, "
      "step: 1}\n");
  PlanOptions options;
  options.max_points = 2'000'000'000;
  EXPECT_EQ(count_points(spec, builtin_registry(), options), 1'000'000'000u);
}

TEST(PlanEnumeration, CountsAgreeWithThePlanForShards) {
  const SweepSpec spec =
      load_sweep_file((fs::path(KS_SOURCE_DIR) / "tests/data/config/good/full.yaml").string(), builtin_registry());
  std::uint64_t total = 0;
  for (std::size_t shard = 0; shard < 3; ++shard) {
    PlanOptions options;
    options.shard_index = shard;
    options.shard_count = 3;
    const std::uint64_t counted = count_points(spec, builtin_registry(), options);
    EXPECT_EQ(counted, make_plan(spec, builtin_registry(), options).points.size());
    total += counted;
  }
  EXPECT_EQ(total, make_plan(spec, builtin_registry()).points.size());
}

}  // namespace
}  // namespace ks
