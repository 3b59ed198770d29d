// Rank 0's plan of a run: groups kept by their source, points made again when handed out, the points
// measured before left out, and the sets of ids a resume reads from the results file.
#include <cstring>
#include <limits>
#include <memory>
#include <set>

#include <gtest/gtest.h>

#include "cluster/work_plan.h"
#include "common/digest.h"
#include "common/point_id_set.h"
#include "config/parse.h"
#include "plan/plan.h"
#include "plan/point_enumerator.h"
#include "support/kernels.h"

namespace ks {
namespace {

using testing::builtin_registry;

const char* const kSweep = R"(name: work
kernels:
  - kernel: rms_norm
    implementations: [cpu]
    modes: [forward, backward]
    grid: {tokens: [64, 128, 256], hidden: [64]}
  - kernel: gemm
    implementations: [cpu, cublaslt]
    grid: {M: [64], N: [64], K: [32]}
)";

struct Fixture {
  SweepSpec spec = parse_sweep_text(kSweep, "work.yaml", builtin_registry());
  Plan plan = make_plan(spec, builtin_registry());
  std::shared_ptr<PointEnumerator> points = std::make_shared<PointEnumerator>(spec, builtin_registry());
  WorkPlan work{builtin_registry(), [this](const PointSource& source) { return points->group_at(source); }};

  // The plan added to `work` as rank 0 adds it, then the points of `measured` and `skipped` marked
  // from sets of ids, as a resume reads them from a results file (with an id of no point of the plan).
  void add(const std::set<std::size_t>& measured, const std::set<std::size_t>& skipped) {
    std::size_t group = 0;
    PositionedKeys keys;
    PointIdSet passed_ids, skipped_ids;
    passed_ids.add("a point no longer planned");
    for (const Point& point : plan.points) {
      while (point.index >= plan.groups[group].last) ++group;
      work.add(point, group);
      keys.emplace_back(point_key(point.id()), point.index);
      if (measured.contains(point.index)) passed_ids.add(point.id());
      if (skipped.contains(point.index)) skipped_ids.add(point.id());
    }
    points->count();
    work.seal();
    passed_ids.seal();
    skipped_ids.seal();
    work.mark_before(keys, passed_ids, skipped_ids);
  }
};

// Under `repetitions`, the plan's groups come round after round, each point in each round with its
// repetition and its measurement's index; a resume marks each repetition of a point on its own.
TEST(WorkPlan, RepetitionsComeRoundAfterRoundAndAreMarkedEachOnItsOwn) {
  SweepSpec spec = parse_sweep_text(kSweep, "work.yaml", builtin_registry());
  const Plan plan = make_plan(spec, builtin_registry());
  auto points = std::make_shared<PointEnumerator>(spec, builtin_registry());
  WorkPlan work{builtin_registry(), [&](const PointSource& source) { return points->group_at(source); }, 3};
  std::size_t group = 0;
  PositionedKeys keys;
  for (const Point& point : plan.points) {
    while (point.index >= plan.groups[group].last) ++group;
    work.add(point, group);
    keys.emplace_back(point_key(point.id()), point.index);
  }
  points->count();
  work.seal();
  add_repetition_keys(keys, 3);
  ASSERT_EQ(keys.size(), 24u);
  EXPECT_EQ(keys[8 + 2].second, 10u);  // repetition 1 of point 2
  EXPECT_EQ(keys[8 + 2].first, repetition_key(point_key(plan.points[2].id()), 1));
  EXPECT_NE(keys[8 + 2].first, keys[2].first);
  EXPECT_NE(keys[16 + 2].first, keys[8 + 2].first);

  // Passed before: point 2 in repetitions 0 and 2, point 7 in repetition 1.
  PointIdSet passed, skipped;
  for (const auto& [repetition, index] : {std::pair{0, 2}, {2, 2}, {1, 7}})
    passed.add(repetition_key(point_key(plan.points[static_cast<std::size_t>(index)].id()), repetition));
  passed.seal();
  skipped.seal();
  work.mark_before(keys, passed, skipped);
  EXPECT_EQ(work.size(), 24u);
  EXPECT_EQ(work.points(), 8u);
  EXPECT_EQ(work.measured_before(), 3u);
  EXPECT_EQ(work.group_count(), 15u);  // 5 groups, 3 rounds
  const std::vector<std::size_t> groups = work.groups_to_measure();
  // Round 1's group 4 (gemm on cuBLASLt: point 7 alone) was measured whole.
  EXPECT_EQ(groups, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14}));
  // Group 1 (the 128-token shape: points 2 and 3) in round 2 keeps its backward point only.
  const std::vector<Point> shape = work.points_to_measure(10 + 1);
  ASSERT_EQ(shape.size(), 1u);
  EXPECT_EQ(shape[0].id(), plan.points[3].id());
  EXPECT_EQ(shape[0].repetition, 2);
  EXPECT_EQ(shape[0].index, 16u + 3);
  EXPECT_TRUE(work.needs(5 + 4).gpu);  // gemm on cuBLASLt in round 1
}

TEST(WorkPlan, MakesTheGroupsAgainWithoutThePointsMeasuredBefore) {
  Fixture f;
  ASSERT_EQ(f.plan.points.size(), 8u);  // 3 shapes x 2 modes of rms_norm; gemm on cpu and on cuBLASLt
  f.add({0, 1, 3}, {6});
  EXPECT_EQ(f.work.size(), 8u);
  EXPECT_EQ(f.work.measured_before(), 3u);
  EXPECT_EQ(f.work.to_measure(), 5u);
  EXPECT_EQ(f.work.group_count(), 5u);
  // Group 0 is measured whole; group 1 keeps its forward point.
  EXPECT_EQ(f.work.groups_to_measure(), (std::vector<std::size_t>{1, 2, 3, 4}));
  const std::vector<Point> group1 = f.work.points_to_measure(1);
  ASSERT_EQ(group1.size(), 1u);
  EXPECT_EQ(group1[0].index, 2u);
  EXPECT_EQ(group1[0].id(), f.plan.points[2].id());
  const std::vector<Point> group2 = f.work.points_to_measure(2);
  ASSERT_EQ(group2.size(), 2u);
  EXPECT_EQ(group2[1].id(), f.plan.points[5].id());
  EXPECT_EQ(group2[1].params, f.plan.points[5].params);
  EXPECT_FALSE(f.work.needs(3).gpu);
  EXPECT_TRUE(f.work.needs(4).gpu);  // gemm on cuBLASLt
  EXPECT_TRUE(f.work.skipped_before(f.work.points_to_measure(3).front()));
  EXPECT_FALSE(f.work.skipped_before(f.work.points_to_measure(4).front()));
  EXPECT_FALSE(f.work.any_in_python());
}

TEST(WorkPlan, RefusesPointsOutOfPlanOrder) {
  Fixture f;
  f.work.add(f.plan.points[0], 0);
  EXPECT_THROW(f.work.add(f.plan.points[2], 1), std::logic_error);  // point 1 skipped
  f.work.add(f.plan.points[1], 0);
  EXPECT_THROW(f.work.add(f.plan.points[2], 2), std::logic_error);  // group 1 skipped
}

TEST(PointIdSet, HoldsDigestsAndOtherIdsAlike) {
  const Fixture f;
  PointIdSet set;
  set.add(f.plan.points[3].id());
  set.add("imported-row-17");
  set.add(f.plan.points[3].id());
  EXPECT_THROW(set.contains("imported-row-17"), std::logic_error);  // not sealed
  set.seal();
  EXPECT_EQ(set.size(), 2u);
  EXPECT_TRUE(set.contains(f.plan.points[3].id()));
  EXPECT_TRUE(set.contains("imported-row-17"));
  EXPECT_FALSE(set.contains(f.plan.points[4].id()));
  EXPECT_FALSE(set.contains("imported-row-18"));
  // Upper-case hex is other text, not the same digest.
  std::string upper = f.plan.points[3].id();
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_FALSE(set.contains(upper));
}

TEST(PointIdSet, FindsEachOfManyIdsAndNoOther) {
  PointIdSet empty;
  EXPECT_FALSE(empty.contains(point_key("anything")));
  PointIdSet set;
  for (int i = 0; i < 5000; i += 2) set.add(sha256_hex(std::to_string(i)));
  set.seal();
  EXPECT_EQ(set.size(), 2500u);
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(set.contains(sha256_hex(std::to_string(i))), i % 2 == 0) << i;
  EXPECT_EQ(point_key_hex(point_key(sha256_hex("7"))), sha256_hex("7"));
}

// A repetition's key is the SHA-256 of the point's 32 bytes followed by "repetition N" (N from 1;
// repetition 0 is the point's own key): the keys of files already written depend on it.
TEST(PointKey, ARepetitionsKeyDigestsThePointsBytesAndItsNumber) {
  const PointKey point = point_key(sha256_hex("a point"));
  const std::string bytes(reinterpret_cast<const char*>(point.data()), point.size());
  EXPECT_EQ(repetition_key(point, 0), point);
  EXPECT_EQ(repetition_key(point, 1), sha256_bytes(bytes + "repetition 1"));
  EXPECT_EQ(repetition_key(point, 999), sha256_bytes(bytes + "repetition 999"));
  const auto largest = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(repetition_key(point, largest), sha256_bytes(bytes + "repetition " + std::to_string(largest)));
  EXPECT_EQ(point_key("not a digest"), sha256_bytes("not a digest"));
}

TEST(PointKeyLess, OrdersKeysAsTheirBytesDo) {
  // Keys that differ in their first eight bytes (high bits and low bits alike), and keys that differ
  // only after them.
  std::vector<PointKey> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(point_key(sha256_hex(std::to_string(i))));
  PointKey base = keys[0];
  for (int byte : {0, 7, 8, 31}) {
    for (unsigned char value : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      PointKey key = base;
      key[byte] = value;
      keys.push_back(key);
    }
  }
  for (const PointKey& a : keys)
    for (const PointKey& b : keys)
      ASSERT_EQ(PointKeyLess()(a, b), std::memcmp(a.data(), b.data(), a.size()) < 0)
          << point_key_hex(a) << " against " << point_key_hex(b);
}

}  // namespace
}  // namespace ks
