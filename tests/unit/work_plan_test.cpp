// Rank 0's plan of a run: groups kept by their source, points made again when handed out, the points
// measured before left out, and the sets of ids a resume reads from the results file.
#include <cstring>
#include <memory>
#include <set>

#include <gtest/gtest.h>

#include "cluster/work_plan.h"
#include "config/parse.h"
#include "plan/plan.h"
#include "plan/point_enumerator.h"
#include "common/digest.h"
#include "common/point_id_set.h"
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
      keys.emplace_back(point_key(point.id), point.index);
      if (measured.contains(point.index)) passed_ids.add(point.id);
      if (skipped.contains(point.index)) skipped_ids.add(point.id);
    }
    points->count();
    work.seal();
    passed_ids.seal();
    skipped_ids.seal();
    work.mark_before(keys, passed_ids, skipped_ids);
  }
};

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
  EXPECT_EQ(group1[0].id, f.plan.points[2].id);
  const std::vector<Point> group2 = f.work.points_to_measure(2);
  ASSERT_EQ(group2.size(), 2u);
  EXPECT_EQ(group2[1].id, f.plan.points[5].id);
  EXPECT_EQ(group2[1].params, f.plan.points[5].params);
  EXPECT_FALSE(f.work.needs_gpu(3));
  EXPECT_TRUE(f.work.needs_gpu(4));  // gemm on cuBLASLt
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
  set.add(f.plan.points[3].id);
  set.add("imported-row-17");
  set.add(f.plan.points[3].id);
  EXPECT_THROW(set.contains("imported-row-17"), std::logic_error);  // not sealed
  set.seal();
  EXPECT_EQ(set.size(), 2u);
  EXPECT_TRUE(set.contains(f.plan.points[3].id));
  EXPECT_TRUE(set.contains("imported-row-17"));
  EXPECT_FALSE(set.contains(f.plan.points[4].id));
  EXPECT_FALSE(set.contains("imported-row-18"));
  // Upper-case hex is other text, not the same digest.
  std::string upper = f.plan.points[3].id;
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
