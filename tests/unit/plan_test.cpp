// Planning: SweepSpec -> ordered points (product, zip, include, exclude, defaults, validation),
// point ids, groups, deduplication, the --max-points limit, shards; and canonical JSON, which ids
// are made of.
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/canonical_json.h"
#include "common/digest.h"
#include "config/sweep_spec.h"
#include "kernels/kernel.h"
#include "plan/plan.h"

namespace ks {
namespace {

class NoInstance final : public Instance {
 public:
  BoundMode bind(const std::string&) override {
    return {[] {}, [] { return CheckResult{true, ""}; }};
  }
};

ParamSpec param(std::string name, ParamType type, Json default_value) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.default_value = std::move(default_value);
  return spec;
}

// A kernel of this test: a (integer, default 1; 13 is refused by validate), b (integer, required),
// c (string, default "x"); modes m1, m2; implementations i1, i2.
KernelSpec toy_kernel() {
  KernelSpec spec;
  spec.name = "toy";
  spec.title = "Toy";
  spec.parameters = {param("a", ParamType::integer, 1), param("b", ParamType::integer, nullptr),
                     param("c", ParamType::string, "x")};
  spec.modes = {"m1", "m2"};
  const InstanceFactory make = [](const Parameters&) { return std::make_unique<NoInstance>(); };
  spec.implementations = {{"i1", Backend::cpu, "", make, {}, ""}, {"i2", Backend::cpu, "", make, {}, ""}};
  spec.validate = [](const Parameters& params) -> std::optional<std::string> {
    if (params.get<std::int64_t>("a") == 13) return "a: 13 is unlucky";
    return std::nullopt;
  };
  return spec;
}

const Registry& registry() {
  static const Registry registry = [] {
    Registry r;
    register_builtin_kernels(r);
    r.add(toy_kernel());
    return r;
  }();
  return registry;
}

Axis axis(std::string name, AxisValues values) { return Axis{std::move(name), std::move(values), {"t.yaml", 7, 5}}; }

KernelBlock block(std::string kernel, std::vector<Axis> grid) {
  KernelBlock b;
  b.kernel = std::move(kernel);
  b.grid = std::move(grid);
  b.where = {"t.yaml", 4, 5};
  return b;
}

KernelBlock gemm_block(std::vector<Axis> grid) {
  KernelBlock b = block("gemm", std::move(grid));
  b.implementations = {"cpu"};
  return b;
}

KernelBlock toy_block(std::vector<Axis> grid) {
  KernelBlock b = block("toy", std::move(grid));
  b.fixed = {{"b", 2}};
  return b;
}

SweepSpec sweep(std::vector<KernelBlock> blocks) {
  SweepSpec spec;
  spec.name = "test";
  spec.source_path = "t.yaml";
  spec.kernels = std::move(blocks);
  return spec;
}

Plan plan_of(std::vector<KernelBlock> blocks, PlanOptions options = {}) {
  return make_plan(sweep(std::move(blocks)), registry(), options);
}

// "M=1 N=3 dtype=fp32" style summaries of chosen parameters, in plan order.
std::vector<std::string> describe(const Plan& plan, const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& p : plan.points) {
    std::string text;
    for (const auto& key : keys) {
      if (!text.empty()) text += ' ';
      if (key == "implementation") text += p.implementation;
      else if (key == "mode") text += p.mode;
      else
        text +=
            key + "=" + (p.params.at(key).is_string() ? p.params.at(key).get<std::string>() : p.params.at(key).dump());
    }
    out.push_back(text);
  }
  return out;
}

SweepFileError plan_error(std::vector<KernelBlock> blocks) {
  try {
    plan_of(std::move(blocks));
  } catch (const SweepFileError& e) { return e; }
  ADD_FAILURE() << "make_plan accepted the sweep";
  return SweepFileError({}, "", "");
}

std::set<std::string> ids_of(const Plan& plan) {
  std::set<std::string> ids;
  for (const auto& p : plan.points) ids.insert(p.id());
  return ids;
}

// A point's id as computed from its fields (Point::id() spells the key the enumerator set).
std::string digest_hex(const Point& point) { return point_key_hex(point_digest(point)); }

TEST(Plan, ProductHasTheLastAxisFastest) {
  const Plan plan = plan_of({gemm_block({axis("M", {1, 2}), axis("N", {3, 4, 5}), axis("dtype", {"fp32", "bf16"})})});
  const std::vector<std::string> expected = {"M=1 N=3 dtype=fp32", "M=1 N=3 dtype=bf16", "M=1 N=4 dtype=fp32",
                                             "M=1 N=4 dtype=bf16", "M=1 N=5 dtype=fp32", "M=1 N=5 dtype=bf16",
                                             "M=2 N=3 dtype=fp32", "M=2 N=3 dtype=bf16", "M=2 N=4 dtype=fp32",
                                             "M=2 N=4 dtype=bf16", "M=2 N=5 dtype=fp32", "M=2 N=5 dtype=bf16"};
  EXPECT_EQ(describe(plan, {"M", "N", "dtype"}), expected);
  EXPECT_EQ(
      count_points_upper_bound(
          sweep({gemm_block({axis("M", {1, 2}), axis("N", {3, 4, 5}), axis("dtype", {"fp32", "bf16"})})}), registry()),
      12u);
  for (std::size_t i = 0; i < plan.points.size(); ++i) EXPECT_EQ(plan.points[i].index, i);
}

TEST(Plan, ImplementationsThenModesInListedOrderForEachCombination) {
  KernelBlock b = toy_block({axis("a", {1, 2})});
  b.implementations = {"i2", "i1"};
  b.modes = {"m2", "m1"};
  const std::vector<std::string> expected = {"a=1 i2 m2", "a=1 i2 m1", "a=1 i1 m2", "a=1 i1 m1",
                                             "a=2 i2 m2", "a=2 i2 m1", "a=2 i1 m2", "a=2 i1 m1"};
  EXPECT_EQ(describe(plan_of({b}), {"a", "implementation", "mode"}), expected);
}

TEST(Plan, OmittedImplementationsAndModesMeanAllOfTheKernels) {
  const Plan plan = plan_of({toy_block({axis("a", {1})})});
  EXPECT_EQ(describe(plan, {"implementation", "mode"}), (std::vector<std::string>{"i1 m1", "i1 m2", "i2 m1", "i2 m2"}));
}

TEST(Plan, KernelBlocksFollowFileOrder) {
  const Plan plan = plan_of({gemm_block({axis("M", {7})}), toy_block({axis("a", {5})}), gemm_block({axis("M", {3})})});
  ASSERT_EQ(plan.points.size(), 6u);
  EXPECT_EQ(plan.points[0].kernel, "gemm");
  EXPECT_EQ(plan.points[1].kernel, "toy");
  EXPECT_EQ(plan.points[4].kernel, "toy");
  EXPECT_EQ(plan.points[5].kernel, "gemm");
  EXPECT_EQ(plan.points[5].params.at("M"), 3);
}

TEST(Plan, ZippedAxesAdvanceTogetherAtThePositionOfTheirFirstAxis) {
  KernelBlock b = gemm_block({axis("M", {1, 2, 3}), axis("dtype", {"fp32", "bf16"}), axis("N", {10, 20, 30})});
  b.zip = {{"M", "N"}};
  const std::vector<std::string> expected = {"M=1 N=10 dtype=fp32", "M=1 N=10 dtype=bf16", "M=2 N=20 dtype=fp32",
                                             "M=2 N=20 dtype=bf16", "M=3 N=30 dtype=fp32", "M=3 N=30 dtype=bf16"};
  EXPECT_EQ(describe(plan_of({b}), {"M", "N", "dtype"}), expected);
  EXPECT_EQ(count_points_upper_bound(sweep({b}), registry()), 6u);

  b.zip = {{"N", "M"}};  // the order inside the zip list does not move the group
  EXPECT_EQ(describe(plan_of({b}), {"M", "N", "dtype"}), expected);
}

TEST(Plan, ZippedAxesOfDifferentLengthsAreAnError) {
  KernelBlock b = gemm_block({axis("M", {1, 2, 3}), axis("N", {10, 20})});
  b.zip = {{"M", "N"}};
  const SweepFileError e = plan_error({b});
  EXPECT_EQ(e.key(), "kernels[0].zip");
  EXPECT_EQ(e.where().line, 7);
  EXPECT_NE(e.problem().find("differ in length"), std::string::npos) << e.what();
}

TEST(Plan, ZipOfAnAxisNotInTheGridIsAnError) {
  KernelBlock b = gemm_block({axis("M", {1, 2})});
  b.zip = {{"M", "K"}};
  EXPECT_EQ(plan_error({b}).key(), "kernels[0].zip");
}

TEST(Plan, RangesArriveAsExpandedAxes) {
  // {from: 256, to: 1024, mul: 2} reaches the planner as the axis the parser expanded it to.
  const Plan plan = plan_of({gemm_block({axis("N", {256, 512, 1024})})});
  EXPECT_EQ(describe(plan, {"N"}), (std::vector<std::string>{"N=256", "N=512", "N=1024"}));
}

TEST(Plan, IncludeEntriesFollowTheGridAndTakeFixedThenDefaults) {
  KernelBlock b = gemm_block({axis("M", {1, 2})});
  b.fixed = {{"K", 64}};
  b.include = {Json{{"M", 100}, {"N", 100}}, Json{{"M", 5}, {"K", 9}, {"dtype", "fp32"}}};
  const Plan plan = plan_of({b});
  EXPECT_EQ(describe(plan, {"M", "N", "K", "dtype"}),
            (std::vector<std::string>{"M=1 N=1024 K=64 dtype=bf16", "M=2 N=1024 K=64 dtype=bf16",
                                      "M=100 N=100 K=64 dtype=bf16", "M=5 N=1024 K=9 dtype=fp32"}));
  EXPECT_EQ(count_points_upper_bound(sweep({b}), registry()), 4u);
}

TEST(Plan, ABlockWithoutGridGivesOnlyItsIncludeEntries) {
  KernelBlock b = gemm_block({});
  b.include = {Json{{"M", 100}}};
  const Plan plan = plan_of({b});
  ASSERT_EQ(plan.points.size(), 1u);
  EXPECT_EQ(plan.points[0].params.at("M"), 100);
}

TEST(Plan, DefaultsFillEveryParameterAndFixedOverridesThem) {
  KernelBlock b = gemm_block({axis("M", {256})});
  b.fixed = {{"K", 128}};
  const Plan plan = plan_of({b});
  ASSERT_EQ(plan.points.size(), 1u);
  EXPECT_EQ(plan.points[0].params,
            (Json{{"M", 256}, {"N", 1024}, {"K", 128}, {"dtype", "bf16"}, {"seed", 0}, {"inputs", "counter"}}));
}

TEST(Plan, AMissingRequiredParameterIsAnErrorNamingIt) {
  KernelBlock b = block("toy", {axis("a", {1})});  // b has no default and is given nowhere
  const SweepFileError e = plan_error({b});
  EXPECT_EQ(e.key(), "kernels[0].b");
  EXPECT_EQ(e.where().line, 4);
  EXPECT_EQ(e.where().file, "t.yaml");
}

TEST(Plan, UnknownKernelImplementationModeOrParameterAreErrors) {
  EXPECT_EQ(plan_error({block("nope", {axis("a", {1})})}).key(), "kernels[0].kernel");
  KernelBlock b = toy_block({axis("a", {1})});
  b.implementations = {"i9"};
  EXPECT_EQ(plan_error({gemm_block({axis("M", {1})}), b}).key(), "kernels[1].implementations");
  b = toy_block({axis("a", {1})});
  b.modes = {"m9"};
  EXPECT_EQ(plan_error({b}).key(), "kernels[0].modes");
  b = toy_block({axis("a", {1})});
  b.include = {Json{{"zz", 1}}};
  EXPECT_EQ(plan_error({b}).key(), "kernels[0].include[0].zz");
}

TEST(Plan, TheKernelsValidatorRefusesACombinationAtTheBlocksLocation) {
  const SweepFileError e = plan_error({toy_block({axis("a", {12, 13})})});
  EXPECT_EQ(e.key(), "kernels[0].a");
  EXPECT_EQ(e.where().line, 4);
  EXPECT_NE(e.problem().find("13 is unlucky"), std::string::npos) << e.what();

  const SweepFileError odd = plan_error({block("distill_cosine_loss", {axis("hidden", {4096, 4095})})});
  EXPECT_EQ(odd.key(), "kernels[0].hidden");
}

TEST(Plan, ACombinationExcludedEverywhereIsNotValidated) {
  KernelBlock b = toy_block({axis("a", {12, 13})});
  b.exclude = {Json{{"a", 13}}};
  EXPECT_EQ(describe(plan_of({b}), {"a"}), (std::vector<std::string>(4, "a=12")));
}

TEST(Plan, ExcludeByParameterValueOrListOfValues) {
  KernelBlock b = gemm_block({axis("M", {256, 512, 1024}), axis("dtype", {"fp32", "bf16"})});
  b.exclude = {Json{{"dtype", "bf16"}, {"M", Json::array({256, 512})}}};
  EXPECT_EQ(
      describe(plan_of({b}), {"M", "dtype"}),
      (std::vector<std::string>{"M=256 dtype=fp32", "M=512 dtype=fp32", "M=1024 dtype=fp32", "M=1024 dtype=bf16"}));
  // The bound is what the grid gives before any rule: nothing is expanded to count it.
  EXPECT_EQ(count_points_upper_bound(sweep({b}), registry()), 6u);
}

TEST(Plan, ExcludeByImplementationAndByMode) {
  KernelBlock b = toy_block({axis("a", {1, 2})});
  b.exclude = {Json{{"implementation", "i2"}, {"a", 1}}, Json{{"mode", "m1"}, {"a", 2}}};
  EXPECT_EQ(describe(plan_of({b}), {"a", "implementation", "mode"}),
            (std::vector<std::string>{"a=1 i1 m1", "a=1 i1 m2", "a=2 i1 m2", "a=2 i2 m2"}));
}

TEST(Plan, ExcludeAppliesToIncludeEntriesToo) {
  KernelBlock b = gemm_block({axis("M", {1})});
  b.include = {Json{{"M", 2}}, Json{{"M", 3}}};
  b.exclude = {Json{{"M", 3}}};
  EXPECT_EQ(describe(plan_of({b}), {"M"}), (std::vector<std::string>{"M=1", "M=2"}));
}

TEST(Plan, ExcludeRuleWithAnUnknownKeyIsAnError) {
  KernelBlock b = gemm_block({axis("M", {1})});
  b.exclude = {Json{{"Q", 3}}};
  EXPECT_EQ(plan_error({b}).key(), "kernels[0].exclude[0].Q");
}

TEST(Plan, RepeatedPointsKeepTheirFirstPlace) {
  KernelBlock b = gemm_block({axis("M", {1, 2})});
  b.include = {Json{{"M", 1}}, Json{{"M", 9}}};  // M=1 is already a grid point
  const Plan plan = plan_of({b, gemm_block({axis("M", {2, 3})})});
  EXPECT_EQ(describe(plan, {"M"}), (std::vector<std::string>{"M=1", "M=2", "M=9", "M=3"}));
  EXPECT_EQ(ids_of(plan).size(), plan.points.size());
  for (std::size_t i = 0; i < plan.points.size(); ++i) EXPECT_EQ(plan.points[i].index, i);
}

TEST(Plan, NumbersWrittenAsFloatOrIntegerAreOnePoint) {
  // 256 and 256.0 have one canonical form, so they are one point with one id.
  KernelBlock b = gemm_block({axis("M", {256, 256.0})});
  EXPECT_EQ(plan_of({b}).points.size(), 1u);
}

TEST(Plan, GroupsAreTheModesOfOneShape) {
  KernelBlock b = toy_block({axis("a", {1, 2})});
  b.include = {Json{{"a", 3}}};
  b.exclude = {Json{{"a", 3}, {"implementation", "i2"}, {"mode", "m1"}}};
  const Plan plan = plan_of({b});
  ASSERT_EQ(plan.points.size(), 11u);
  ASSERT_EQ(plan.groups.size(), 6u);
  std::size_t next = 0;
  for (const auto& group : plan.groups) {
    EXPECT_EQ(group.first, next);
    ASSERT_LT(group.first, group.last);
    for (std::size_t i = group.first; i < group.last; ++i) {
      EXPECT_EQ(plan.points[i].shape_key(), plan.points[group.first].shape_key());
      if (i > group.first) { EXPECT_NE(plan.points[i].mode, plan.points[i - 1].mode); }
    }
    if (group.last < plan.points.size()) {
      EXPECT_NE(plan.points[group.last].shape_key(), plan.points[group.first].shape_key());
    }
    next = group.last;
  }
  EXPECT_EQ(next, plan.points.size());
  EXPECT_EQ(plan.groups.back().last - plan.groups.back().first, 1u);  // a=3 on i2 kept only m2
}

TEST(Plan, ALargerPlanThanMaxPointsIsRefusedBeforeExpansion) {
  // 10^15 points: expanding them would take years, so a quick refusal proves nothing was expanded.
  AxisValues values;
  for (int i = 1; i <= 100000; ++i) values.push_back(i);
  try {
    plan_of({gemm_block({axis("M", values), axis("N", values), axis("K", values)})});
    FAIL() << "a plan of 10^15 points was accepted";
  } catch (const PlanError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1000000000000000 points"), std::string::npos) << what;
    EXPECT_NE(what.find("--max-points"), std::string::npos) << what;
    EXPECT_NE(what.find("limit of 100000000"), std::string::npos) << what;  // the default, 10^8
  }
}

TEST(Plan, CountsSaturateInsteadOfWrapping) {
  AxisValues values;
  for (int i = 1; i <= 100000; ++i) values.push_back(i);
  // 10^5 values on 5 axes is 10^25 points, past 2^64.
  const SweepSpec spec = sweep({gemm_block(
      {axis("M", values), axis("N", values), axis("K", values), axis("seed", values), axis("dtype", values)})});
  EXPECT_EQ(count_points_upper_bound(spec, registry()), UINT64_MAX);
  EXPECT_THROW(make_plan(spec, registry()), PlanError);
}

TEST(Plan, MaxPointsIsAnInclusiveLimit) {
  const KernelBlock b = gemm_block({axis("M", {1, 2}), axis("N", {1, 2})});
  PlanOptions options;
  options.max_points = 3;
  EXPECT_THROW(plan_of({b}, options), PlanError);
  options.max_points = 4;
  EXPECT_EQ(plan_of({b}, options).points.size(), 4u);
}

// `shapes` parameter combinations of the toy kernel; each gives 2 groups (one per implementation) of
// 2 points (one per mode).
KernelBlock shard_block(int shapes) {
  AxisValues values;
  for (int i = 0; i < shapes; ++i) values.push_back(100 + i);
  return toy_block({axis("a", values)});
}

TEST(Plan, ShardsPartitionThePlanByWholeGroups) {
  const Plan full = plan_of({shard_block(30)});
  ASSERT_EQ(full.points.size(), 120u);
  for (std::size_t count : {1u, 2u, 3u, 7u}) {
    std::set<std::string> seen;
    std::size_t total = 0;
    for (std::size_t index = 0; index < count; ++index) {
      PlanOptions options;
      options.shard_index = index;
      options.shard_count = count;
      const Plan shard = plan_of({shard_block(30)}, options);
      total += shard.points.size();
      for (const auto& p : shard.points) EXPECT_TRUE(seen.insert(p.id()).second) << "point in two shards: " << p.id();
      for (std::size_t i = 0; i < shard.points.size(); ++i) EXPECT_EQ(shard.points[i].index, i);
      for (const auto& group : shard.groups) EXPECT_EQ(group.last - group.first, 2u) << "a group was split";
    }
    EXPECT_EQ(total, full.points.size()) << count << " shards";
    EXPECT_EQ(seen, ids_of(full)) << count << " shards";
  }
}

TEST(Plan, ShardsAreTheSameOnEveryRunAndEvenWhenGroupsCostAlike) {
  PlanOptions options;
  options.shard_index = 1;
  options.shard_count = 3;
  const Plan shard = plan_of({shard_block(30)}, options);
  const Plan again = plan_of({shard_block(30)}, options);
  ASSERT_EQ(describe(again, {"a", "implementation", "mode"}), describe(shard, {"a", "implementation", "mode"}));
  // The toy kernel declares no work: every group costs the same, and shards differ by one group at most.
  for (std::size_t count : {2u, 3u, 7u, 11u}) {
    std::size_t fewest = SIZE_MAX, most = 0;
    for (std::size_t index = 0; index < count; ++index) {
      options.shard_index = index;
      options.shard_count = count;
      const std::size_t groups = plan_of({shard_block(30)}, options).groups.size();
      fewest = std::min(fewest, groups);
      most = std::max(most, groups);
    }
    EXPECT_LE(most - fewest, 1u) << count << " shards";
  }
}

TEST(Plan, ShardsBalanceTheKernelsWorkNotTheirPointCounts) {
  // One 65536x8192x8192 GEMM costs as much as many small ones: its shard takes fewer groups.
  AxisValues sizes{65536};
  for (int i = 0; i < 12; ++i) sizes.push_back(64 + i);
  const KernelBlock gemms =
      gemm_block({axis("M", sizes), axis("N", {8192}), axis("K", {8192}), axis("dtype", {"fp32"})});
  PlanOptions options;
  options.shard_count = 2;
  std::vector<std::size_t> groups;
  std::size_t holder = 2;
  for (std::size_t index = 0; index < 2; ++index) {
    options.shard_index = index;
    const Plan shard = plan_of({gemms}, options);
    groups.push_back(shard.groups.size());
    for (const Point& p : shard.points)
      if (p.params.at("M") == 65536) holder = index;
  }
  ASSERT_LT(holder, 2u) << "the large GEMM is in no shard";
  EXPECT_EQ(groups[0] + groups[1], 13u);
  EXPECT_LT(groups[holder] + 2, groups[1 - holder]) << "shard " << holder << " holds the large GEMM";
}

TEST(Plan, BadShardOptionsAreRefused) {
  PlanOptions options;
  options.shard_index = 3;
  options.shard_count = 3;
  EXPECT_THROW(plan_of({shard_block(2)}, options), PlanError);
  options.shard_index = 0;
  options.shard_count = 0;
  EXPECT_THROW(plan_of({shard_block(2)}, options), PlanError);
}

TEST(ParseShard, AcceptsIOverN) {
  PlanOptions options;
  parse_shard("2/5", options);
  EXPECT_EQ(options.shard_index, 2u);
  EXPECT_EQ(options.shard_count, 5u);
  parse_shard("0/1", options);
  EXPECT_EQ(options.shard_index, 0u);
  EXPECT_EQ(options.shard_count, 1u);
}

TEST(ParseShard, RefusesEverythingElse) {
  for (const char* text : {"5/5", "1/0", "a/2", "1", "1/2x", "-1/2", "/2", "1/", " 1/2", ""}) {
    PlanOptions options;
    EXPECT_THROW(parse_shard(text, options), PlanError) << "'" << text << "'";
  }
  PlanOptions options;
  try {
    parse_shard("4/3", options);
  } catch (const PlanError& e) { EXPECT_NE(std::string(e.what()).find("4/3"), std::string::npos) << e.what(); }
}

Point make_point(std::string kernel, std::string implementation, std::string mode, Json params) {
  Point p;
  p.kernel = std::move(kernel);
  p.implementation = std::move(implementation);
  p.mode = std::move(mode);
  p.params = std::move(params);
  return p;
}

TEST(PointId, IdentityHasTheFourKeys) {
  const Point p = make_point("k", "i", "m", {{"x", 1}});
  EXPECT_EQ(canonical_json(p.identity()), R"({"implementation":"i","kernel":"k","mode":"m","params":{"x":1}})");
}

TEST(PointId, GoldenIdOfAGemmPoint) {
  KernelBlock b = gemm_block({axis("M", {256})});
  b.fixed = {{"N", 512}, {"K", 128}, {"dtype", "fp32"}};
  const Plan plan = plan_of({b});
  ASSERT_EQ(plan.points.size(), 1u);
  // Computed independently:
  // python3 -c 'import json,hashlib; print(hashlib.sha256(json.dumps({"implementation":"cpu","kernel":"gemm",
  //   "mode":"forward","params":{"M":256,"N":512,"K":128,"dtype":"fp32","seed":0,"inputs":"counter"}},
  //   sort_keys=True, separators=(",",":")).encode()).hexdigest())'
  EXPECT_EQ(plan.points[0].id(), "b6f4805e9ba5875471084efd8e0e435d867fb59c24ccb2cdb1f19651aeb53c12");
  EXPECT_EQ(plan.points[0].id(), digest_hex(plan.points[0]));
}

TEST(PointId, GoldenIdWithFloatsBooleansNegativesAndStrings) {
  const Point p = make_point("distill_cosine", "cpu", "backward",
                             {{"tokens", 2048},
                              {"hidden", 4096},
                              {"vocab", 128256},
                              {"dtype", "bf16"},
                              {"weight_hard_loss", 0.5},
                              {"weight_soft_loss", 0.5},
                              {"beta", 0.5},
                              {"temperature", 1.0},
                              {"ignore_index", -100},
                              {"chunk_size", "auto"},
                              {"bias", true},
                              {"normalize", "tokens"},
                              {"ignored_fraction", 0.125},
                              {"seed", 0}});
  // Computed independently (temperature written as 1: Python would print 1.0 as "1.0", RFC 8785 as "1"):
  // python3 -c 'import json,hashlib; print(hashlib.sha256(json.dumps({"implementation":"cpu",
  //   "kernel":"distill_cosine","mode":"backward","params":{"tokens":2048,"hidden":4096,"vocab":128256,
  //   "dtype":"bf16","weight_hard_loss":0.5,"weight_soft_loss":0.5,"beta":0.5,"temperature":1,
  //   "ignore_index":-100,"chunk_size":"auto","bias":True,"normalize":"tokens","ignored_fraction":0.125,
  //   "seed":0}}, sort_keys=True, separators=(",",":")).encode()).hexdigest())'
  EXPECT_EQ(digest_hex(p), "231aa412c2977d838a12624e34619adc0628a002f1795ab46861fc08a1f948f6");
}

TEST(PointId, IsTheDigestOfTheCanonicalIdentityWhateverTheNamesHold) {
  const Point p = make_point("k\"1\\", "impl\n\t\x01é", "m", {{"b", "x\"y"}, {"a", {1.5, -2, nullptr}}});
  EXPECT_EQ(digest_hex(p), sha256_hex(canonical_json(p.identity())));
}

TEST(PointId, ShapeKeyIgnoresOnlyTheMode) {
  const Point a = make_point("k", "i", "m1", {{"x", 1}});
  Point b = make_point("k", "i", "m2", {{"x", 1}});
  EXPECT_EQ(a.shape_key(), b.shape_key());
  EXPECT_NE(digest_hex(a), digest_hex(b));
  b.implementation = std::string("j");
  EXPECT_NE(a.shape_key(), b.shape_key());
  b = a;
  b.params["x"] = 2;
  EXPECT_NE(a.shape_key(), b.shape_key());
}

double from_bits(std::uint64_t bits) { return std::bit_cast<double>(bits); }

TEST(CanonicalJson, NumbersAsRfc8785WritesThem) {
  EXPECT_EQ(ecmascript_number(1e21), "1e+21");
  EXPECT_EQ(ecmascript_number(1e-7), "1e-7");
  EXPECT_EQ(ecmascript_number(0.000001), "0.000001");
  EXPECT_EQ(ecmascript_number(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(ecmascript_number(-0.0), "0");
  EXPECT_EQ(ecmascript_number(5e-324), "5e-324");
  EXPECT_EQ(ecmascript_number(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(ecmascript_number(1.0), "1");
  EXPECT_EQ(ecmascript_number(-2.5), "-2.5");
  // RFC 8785 Appendix B, by IEEE-754 bit pattern.
  const std::vector<std::pair<std::uint64_t, std::string>> appendix_b = {
      {0x0000000000000000, "0"},
      {0x8000000000000000, "0"},
      {0x0000000000000001, "5e-324"},
      {0x8000000000000001, "-5e-324"},
      {0x7fefffffffffffff, "1.7976931348623157e+308"},
      {0xffefffffffffffff, "-1.7976931348623157e+308"},
      {0x4340000000000000, "9007199254740992"},
      {0xc340000000000000, "-9007199254740992"},
      {0x4430000000000000, "295147905179352830000"},
      {0x44b52d02c7e14af5, "9.999999999999997e+22"},
      {0x44b52d02c7e14af6, "1e+23"},
      {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
      {0x444b1ae4d6e2ef4e, "999999999999999700000"},
      {0x444b1ae4d6e2ef4f, "999999999999999900000"},
      {0x444b1ae4d6e2ef50, "1e+21"},
      {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
      {0x3eb0c6f7a0b5ed8d, "0.000001"},
      {0x41b3de4355555553, "333333333.3333332"},
      {0x41b3de4355555554, "333333333.33333325"},
      {0x41b3de4355555555, "333333333.3333333"},
      {0x41b3de4355555556, "333333333.3333334"},
      {0x41b3de4355555557, "333333333.33333343"},
      {0xbecbf647612f3696, "-0.0000033333333333333333"},
      {0x43143ff3c1cb0959, "1424953923781206.2"},
  };
  for (const auto& [bits, text] : appendix_b) EXPECT_EQ(ecmascript_number(from_bits(bits)), text) << std::hex << bits;
}

TEST(CanonicalJson, NanAndInfinityHaveNoForm) {
  EXPECT_THROW(ecmascript_number(from_bits(0x7ff8000000000000)), std::runtime_error);
  EXPECT_THROW(ecmascript_number(from_bits(0x7ff0000000000000)), std::runtime_error);
}

TEST(CanonicalJson, SortedKeysNoWhitespaceAndMinimalEscapes) {
  const Json value = {
      {"b", Json::array({1, 2.5, true, nullptr})}, {"a", {{"z", "x\"\\\n\x1f"}, {"é", "€"}}}, {"A", 1e21}};
  EXPECT_EQ(canonical_json(value),
            "{\"A\":1e+21,\"a\":{\"z\":\"x\\\"\\\\\\n\\u001f\",\"é\":\"€\"},\"b\":[1,2.5,true,null]}");
  EXPECT_EQ(canonical_json(Json(-100)), "-100");
  EXPECT_EQ(canonical_json(Json(std::uint64_t{18446744073709551615u})), "18446744073709551615");
}

}  // namespace
}  // namespace ks
