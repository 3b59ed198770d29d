// Fleet health: ranks held against the median of the ranks with the same device, and a rank's
// sentinel held against its own calibration.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

#include "calibration/fleet_health.h"
#include "calibration/sentinel.h"

namespace ks::testing {
namespace {

RankCalibration gpu_rank(int rank, double memory_gbps, double bf16_tflops,
                         const std::string& device = "NVIDIA H100 80GB HBM3") {
  RankCalibration r;
  r.rank = rank;
  r.host = "node" + std::to_string(rank / 4);
  r.cpu.backend = "cpu";
  r.cpu.device = "Intel Xeon";
  DeviceCalibration gpu;
  gpu.backend = "cuda";
  gpu.device = device;
  gpu.measured.memory_gbps = memory_gbps;
  gpu.measured.tflops = {{"bf16", bf16_tflops}};
  r.gpu = gpu;
  return r;
}

TEST(FleetHealth, ARankMoreThanFivePercentBelowTheMedianOfItsKindIsNamedWithTheFigureAndHowFarBelow) {
  const std::vector<RankCalibration> ranks = {gpu_rank(0, 3000, 800), gpu_rank(1, 2990, 805), gpu_rank(2, 3010, 795),
                                              gpu_rank(3, 2700, 800)};
  const auto slow = slow_ranks(ranks);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].rank, 3);
  EXPECT_EQ(slow[0].peers, 4);
  ASSERT_EQ(slow[0].figures.size(), 1u);  // its bf16 rate is the median's
  EXPECT_EQ(slow[0].figures[0].figure, "memory_gbps");
  EXPECT_DOUBLE_EQ(slow[0].figures[0].median, 2995);
  EXPECT_NEAR(slow[0].figures[0].below_pct, 100 * (1 - 2700.0 / 2995), 1e-9);
  EXPECT_EQ(slow[0].describe(),
            "rank 3 on node0 (NVIDIA H100 80GB HBM3): memory_gbps 2700 is 9.8% below the median of 4 (2995)");
}

TEST(FleetHealth, ComputeCountsAsMemoryDoesATensorCoreProductWithItsWiderTolerance) {
  // A GPU's bf16 rate moves with its clock at the power limit: 640 is exactly 20% below 800, not
  // more; 630 is.
  EXPECT_TRUE(slow_ranks({gpu_rank(0, 3000, 800), gpu_rank(1, 3000, 800), gpu_rank(2, 3000, 640)}).empty());
  const auto slow = slow_ranks({gpu_rank(0, 3000, 800), gpu_rank(1, 3000, 800), gpu_rank(2, 3000, 630)});
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].figures[0].figure, "tflops.bf16");
  EXPECT_DOUBLE_EQ(slow[0].figures[0].allowed_pct, 20);
  // Memory, fp32 on a GPU and every figure of a CPU: 5%.
  EXPECT_DOUBLE_EQ(slow_fraction("cuda", "memory_gbps"), 0.05);
  EXPECT_DOUBLE_EQ(slow_fraction("cuda", "tflops.fp32"), 0.05);
  EXPECT_DOUBLE_EQ(slow_fraction("cuda", "tflops.fp64"), 0.20);
  EXPECT_DOUBLE_EQ(slow_fraction("cpu", "tflops.fp64"), 0.05);
  EXPECT_EQ(slow_rule(), "more than 5% below (20% for a GPU's tensor-core products)");
}

TEST(FleetHealth, OnlyRanksWithTheSameDeviceAreComparedAndALoneDeviceIsNever) {
  // An H200 among H100s is faster, and alone of its kind; an A100 alone is slower, and alone too.
  const auto slow = slow_ranks({gpu_rank(0, 3000, 800), gpu_rank(1, 3000, 800), gpu_rank(2, 4300, 780, "NVIDIA H200"),
                                gpu_rank(3, 1500, 300, "NVIDIA A100-SXM4-80GB")});
  EXPECT_TRUE(slow.empty());
}

TEST(FleetHealth, TwoCpuRanksOneOfThemSharingItsCoreTheSlowerIsNamed) {
  RankCalibration fast, shared;
  fast.rank = 0;
  shared.rank = 1;
  fast.host = shared.host = "node0";
  for (RankCalibration* r : {&fast, &shared}) {
    r->cpu.backend = "cpu";
    r->cpu.device = "AMD EPYC";
  }
  fast.cpu.measured.memory_gbps = 10;
  shared.cpu.measured.memory_gbps = 5;
  fast.cpu.measured.tflops = shared.cpu.measured.tflops = {{"fp64", 0.05}};
  const auto slow = slow_ranks({fast, shared});
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].rank, 1);
  EXPECT_EQ(ranks_to_set_aside(slow), std::vector<int>{1});
  EXPECT_DOUBLE_EQ(slow[0].figures[0].median, 7.5);
}

TEST(FleetHealth, WhereEveryRankOfADeviceIsSlowInSomeFigureTheLeastSlowIsNotSetAside) {
  // Rank 0 is 10% below in memory (5% past its tolerance), rank 1 45% below in bf16 (25% past its
  // tolerance): rank 1 goes, rank 0 stays.
  const auto slow = slow_ranks({gpu_rank(0, 2700, 800), gpu_rank(1, 3300, 300)});
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_EQ(ranks_to_set_aside(slow), std::vector<int>{1});
  // Judged by how far past its tolerance: rank 1's bf16 21% below (20% allowed) is less slow than rank
  // 0's memory 10% below (5% allowed), so rank 0 goes.
  EXPECT_EQ(ranks_to_set_aside(slow_ranks({gpu_rank(0, 2700, 800), gpu_rank(1, 3300, 520)})), std::vector<int>{0});
  // Among four ranks, the two slow ones both go: the others stay.
  const auto two_of_four =
      slow_ranks({gpu_rank(0, 3000, 800), gpu_rank(1, 3000, 800), gpu_rank(2, 2000, 800), gpu_rank(3, 3000, 500)});
  EXPECT_EQ(ranks_to_set_aside(two_of_four), (std::vector<int>{2, 3}));
}

DeviceCalibration measured(double memory_gbps, double bf16) {
  DeviceCalibration d;
  d.backend = "cuda";
  d.measured.memory_gbps = memory_gbps;
  d.measured.tflops = {{"bf16", bf16}};
  return d;
}

TEST(Sentinel, DriftIsAFigureFurtherBelowTheCalibrationThanItsToleranceAndItEndsWhenTheDeviceIsBack) {
  Sentinel sentinel(std::chrono::minutes(10), measured(3000, 800));
  EXPECT_FALSE(sentinel.drifting());
  EXPECT_EQ(sentinel.note(measured(2950, 790), "rank 2 on node0"), "");
  // bf16 12% below, as a sound GPU at its power limit reads at times: not drift; memory 6% below is.
  EXPECT_EQ(sentinel.note(measured(2950, 704), "rank 2 on node0"), "");
  EXPECT_FALSE(sentinel.drifting());
  EXPECT_NE(sentinel.note(measured(2800, 800), "rank 2 on node0"), "");
  EXPECT_TRUE(sentinel.drifting());
  EXPECT_EQ(sentinel.note(measured(3000, 800), "rank 2 on node0"),
            "rank 2 on node0: back within the tolerances of its calibration: its points are no longer flagged drift");
  const std::string drift = sentinel.note(measured(2990, 600), "rank 2 on node0");
  EXPECT_TRUE(sentinel.drifting());
  EXPECT_EQ(drift,
            "rank 2 on node0: drift: tflops.bf16 600 is 25.0% below 800 (its calibration's figures); its points "
            "are flagged drift until it is back");
  EXPECT_NE(sentinel.note(measured(2990, 620), "rank 2 on node0"),
            "");  // still drifting: said again, with the new figure
  EXPECT_EQ(sentinel.note(measured(3005, 795), "rank 2 on node0"),
            "rank 2 on node0: back within the tolerances of its calibration: its points are no longer flagged drift");
  EXPECT_FALSE(sentinel.drifting());
}

TEST(Sentinel, IsDueEveryIntervalAndNeverWhenOff) {
  const auto now = Sentinel::Clock::now();
  EXPECT_FALSE(Sentinel().due(now + std::chrono::hours(100)));
  EXPECT_FALSE(Sentinel(std::chrono::seconds(0), measured(1, 1)).due(now + std::chrono::hours(100)));
  const Sentinel every_minute(std::chrono::minutes(1), measured(1, 1));
  EXPECT_FALSE(every_minute.due(now));
  EXPECT_TRUE(every_minute.due(now + std::chrono::seconds(61)));
}

TEST(Sentinel, TheIntervalIsReadInSecondsMinutesOrHoursAndAnythingElseIsRefusedByName) {
  EXPECT_DOUBLE_EQ(parse_sentinel_interval("10m").count(), 600);
  EXPECT_DOUBLE_EQ(parse_sentinel_interval("90s").count(), 90);
  EXPECT_DOUBLE_EQ(parse_sentinel_interval("1h").count(), 3600);
  EXPECT_DOUBLE_EQ(parse_sentinel_interval("2.5").count(), 2.5);
  EXPECT_DOUBLE_EQ(parse_sentinel_interval("off").count(), 0);
  for (const char* bad : {"ten", "5x", "-1m", "", "m"}) {
    try {
      parse_sentinel_interval(bad);
      ADD_FAILURE() << bad << " was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--sentinel-every ") + bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ks::testing
