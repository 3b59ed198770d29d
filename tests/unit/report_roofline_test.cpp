// The report's speed of light, from the model's side: the roofs' points, the intensity axis, which
// device's roofs a kernel gets, the flagged points and the slow ranks, on points and calibrations
// made here.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "report/report_speed_of_light.h"
#include "report/report_tables.h"

namespace ks::report_page {
namespace {

void expect_points(const std::vector<RooflinePlot::Point>& made, const std::vector<RooflinePlot::Point>& expected) {
  ASSERT_EQ(made.size(), expected.size());
  for (std::size_t i = 0; i < made.size(); ++i) {
    EXPECT_DOUBLE_EQ(made[i].intensity, expected[i].intensity) << i;
    EXPECT_DOUBLE_EQ(made[i].tflops, expected[i].tflops) << i;
  }
}

TEST(ReportRoofline, TheRoofFollowsMemoryToTheRidgeThenTheRate) {
  // 2000 GB/s and 50 TFLOP/s meet at 25 FLOP/byte.
  expect_points(roof_points(2000, 50, 0.1, 1000), {{0.1, 0.2}, {25, 50}, {1000, 50}});
  // A ridge left of the axis: the rate alone; right of it: the memory roof alone.
  expect_points(roof_points(2000, 50, 100, 1000), {{100, 50}, {1000, 50}});
  expect_points(roof_points(2000, 50, 0.1, 10), {{0.1, 0.2}, {10, 20}});
  // No rate for the dtype: the memory roof over the whole axis.
  expect_points(roof_points(2000, std::nan(""), 0.1, 1000), {{0.1, 0.2}, {1000, 2000}});
}

TEST(ReportRoofline, TheIntensityAxisIsWholeDecadesWithRoom) {
  EXPECT_EQ(intensity_axis({0.25, 25}), std::make_pair(0.1, 100.0));
  EXPECT_EQ(intensity_axis({1}), std::make_pair(0.1, 10.0));
  EXPECT_EQ(intensity_axis({0.01, 3, 400}), std::make_pair(0.001, 1000.0));
}

// --- a kernel's points and its ranks' calibrations ----------------------------------------------------

DeviceCalibration cpu(double memory_gbps, double fp32_tflops) {
  DeviceCalibration d;
  d.backend = "cpu";
  d.device = "Test CPU";
  d.measured.memory_gbps = memory_gbps;
  d.measured.tflops = {{"fp32", fp32_tflops}, {"fp64", fp32_tflops / 2}};
  return d;
}

RankCalibration rank(int number, double memory_gbps, double fp32_tflops) {
  RankCalibration r;
  r.rank = number;
  r.host = "node" + std::to_string(number);
  r.cpu = cpu(memory_gbps, fp32_tflops);
  return r;
}

// A passed point of `flops` and `bytes` a call in 1 ms, on a CPU rank.
ViewRow point(const std::string& implementation, int on_rank, double flops, double bytes,
              const std::string& flags = "") {
  ViewRow row;
  row.file = "a.h5";
  row.run.kernel = "k";
  row.run.implementation = implementation;
  row.run.mode = "forward";
  row.run.status = "passed";
  row.run.rank = on_rank;
  row.run.n_repeat = 10;
  row.run.stats.median_ns = 1e6;
  row.run.flops = flops;
  row.run.bytes = bytes;
  row.run.tflops = flops / 1e6 / 1e3;
  row.run.gbps = bytes / 1e6;
  row.run.flags = flags;
  row.params = {{"dtype", "fp32"}};
  return row;
}

KernelSection section_of(const std::deque<ViewRow>& rows) {
  KernelSection section;
  section.kernel = "k";
  section.modes = {"forward"};
  for (const ViewRow& row : rows) {
    section.rows.push_back({&row, row.run.implementation});
    if (std::find(section.labels.begin(), section.labels.end(), row.run.implementation) == section.labels.end())
      section.labels.push_back(row.run.implementation);
    section.has_flops = section.has_flops || row.run.flops > 0;
    section.has_bytes = section.has_bytes || row.run.bytes > 0;
  }
  return section;
}

TEST(ReportRoofline, TheRoofsAreTheMedianOfTheDevicesRanksAndImplausiblePointsAreASeriesOfTheirOwn) {
  const std::deque<ViewRow> rows{point("cpu", 0, 1e9, 1e8), point("cpu", 1, 4e9, 1e8),
                                 point("cpu", 1, 1e12, 1e8, "implausible")};
  KernelSection section = section_of(rows);
  RankCalibrations calibrations{{{"a.h5", 0}, rank(0, 100, 1)}, {{"a.h5", 1}, rank(1, 200, 3)}};
  add_roofline(section, calibrations);
  ASSERT_EQ(section.rooflines.size(), 1u) << section.no_roofline;
  const RooflinePlot& plot = section.rooflines[0];
  EXPECT_EQ(plot.device, "Test CPU");
  ASSERT_EQ(plot.roofs.size(), 1u);
  EXPECT_EQ(plot.roofs[0].dtype, "fp32");
  EXPECT_DOUBLE_EQ(plot.roofs[0].memory_gbps, 150);  // the median of 100 and 200
  EXPECT_DOUBLE_EQ(plot.roofs[0].tflops, 2);         // of 1 and 3
  // Intensities 10, 40 and 10000 FLOP/byte, the ridge at 2 TFLOP/s / 150 GB/s = 13.3.
  EXPECT_DOUBLE_EQ(plot.low, 1);
  EXPECT_DOUBLE_EQ(plot.high, 1e5);
  expect_points(plot.roofs[0].points, {{1, 0.15}, {2e3 / 150, 2}, {1e5, 2}});
  ASSERT_EQ(plot.series.size(), 2u);
  EXPECT_EQ(plot.series[0].title, "cpu");
  expect_points(plot.series[0].points, {{10, 1}, {40, 4}});
  EXPECT_TRUE(plot.series[1].implausible);
  EXPECT_EQ(plot.series[1].title, "cpu (implausible)");
  expect_points(plot.series[1].points, {{1e4, 1000}});
  EXPECT_NE(plot.caption.find("the median of its 2 ranks"), std::string::npos) << plot.caption;
  EXPECT_NE(plot.caption.find("implausible"), std::string::npos) << plot.caption;
  EXPECT_TRUE(section.no_roofline.empty());
}

TEST(ReportRoofline, AKernelWithoutFlopsOrWithoutCalibrationsSaysWhyItHasNone) {
  const std::deque<ViewRow> bytes_only{point("cpu", 0, 0, 1e8)};
  KernelSection copy = section_of(bytes_only);
  add_roofline(copy, {{{"a.h5", 0}, rank(0, 100, 1)}});
  EXPECT_TRUE(copy.rooflines.empty());
  EXPECT_EQ(copy.no_roofline,
            "No roofline: its points count bytes but no FLOPs, so they have no arithmetic intensity.");

  const std::deque<ViewRow> no_work{point("cpu", 0, 0, 0, "no-work")};
  KernelSection sleeper = section_of(no_work);
  add_roofline(sleeper, {{{"a.h5", 0}, rank(0, 100, 1)}});
  EXPECT_EQ(sleeper.no_roofline, "No roofline: its points declare no work (no FLOPs, no bytes).");

  const std::deque<ViewRow> both{point("cpu", 0, 1e9, 1e8)};
  KernelSection uncalibrated = section_of(both);
  add_roofline(uncalibrated, {});
  EXPECT_TRUE(uncalibrated.rooflines.empty());
  EXPECT_NE(uncalibrated.no_roofline.find("no calibration"), std::string::npos) << uncalibrated.no_roofline;
}

TEST(ReportRoofline, AGpuPointIsHeldToItsRanksGpuAndACpuPointToItsCpu) {
  RankCalibrations calibrations{{{"a.h5", 0}, rank(0, 100, 1)}};
  ViewRow on_cpu = point("cpu", 0, 1, 1);
  EXPECT_EQ(device_of(on_cpu, calibrations), &calibrations.at({"a.h5", 0}).cpu);
  ViewRow on_gpu = on_cpu;
  on_gpu.run.gpu_uuid = "GPU-1";
  EXPECT_EQ(device_of(on_gpu, calibrations), nullptr);  // the rank's calibration has no GPU
  calibrations.at({"a.h5", 0}).gpu = cpu(3000, 60);
  EXPECT_EQ(device_of(on_gpu, calibrations), &*calibrations.at({"a.h5", 0}).gpu);
  on_gpu.file = "b.h5";
  EXPECT_EQ(device_of(on_gpu, calibrations), nullptr);
}

TEST(ReportFlags, ImplausiblePointsComeFirstThenDriftThenNoWorkAndInCacheIsNotListed) {
  const std::vector<ViewRow> view{point("a", 0, 0, 0, "no-work"), point("b", 0, 1, 1, "in-cache"),
                                  point("c", 0, 1, 1, "implausible,in-cache"), point("d", 0, 1, 1, ""),
                                  point("e", 0, 1, 1, "drift")};
  const auto flagged = flagged_points(view);
  ASSERT_EQ(flagged.size(), 3u);
  EXPECT_EQ(flagged[0].row->run.implementation, "c");
  EXPECT_EQ(flagged[0].flag, "implausible");
  EXPECT_EQ(flagged[0].meaning, flag_meaning("implausible"));
  EXPECT_EQ(flagged[1].row->run.implementation, "e");
  EXPECT_EQ(flagged[1].flag, "drift");
  EXPECT_FALSE(flag_meaning("drift").empty());
  EXPECT_EQ(flagged[2].row->run.implementation, "a");
  EXPECT_EQ(flagged[2].flag, "no-work");
  EXPECT_FALSE(flag_meaning("no-work").empty());
  EXPECT_TRUE(flag_meaning("in-cache").empty());
}

// Energy per call has its columns where a point has a figure, and none where no point has one.
TEST(ReportTables, EnergyColumnsAppearWhereAPointHasAFigure) {
  std::deque<ViewRow> rows{point("a", 0, 2e12, 1e9), point("b", 0, 2e12, 1e9)};
  rows[0].run.joules_per_call = 0.25;
  rows[0].run.gflops_per_joule = 8000;
  KernelSection section;
  section.kernel = "k";
  section.has_flops = section.has_bytes = true;
  for (const ViewRow& row : rows) section.rows.push_back(PointRow{&row, row.run.implementation});
  const Table with = points_table(section, false);
  const auto column = std::find(with.headers.begin(), with.headers.end(), "J/call");
  ASSERT_NE(column, with.headers.end());
  const auto at = static_cast<std::size_t>(column - with.headers.begin());
  EXPECT_EQ(with.headers[at + 1], "GFLOP/J");
  EXPECT_EQ(with.rows[0][at], "0.2500");
  EXPECT_EQ(with.rows[0][at + 1], "8000");
  EXPECT_NE(with.rows[1][at], "0.2500");  // no figure: the missing mark
  section.rows.erase(section.rows.begin());
  const Table without = points_table(section, false);
  EXPECT_EQ(std::find(without.headers.begin(), without.headers.end(), "J/call"), without.headers.end());
}

std::string calibration_json(int number, double memory_gbps) {
  RankCalibration r = rank(number, memory_gbps, 1);
  return to_json(r).dump();
}

TEST(ReportFlags, SlowRanksAreNamedWithThePointsTheyMeasured) {
  LoadedFile file;
  file.path = "a.h5";
  for (int r = 0; r < 5; ++r) {
    RankInfo info;
    info.rank = r;
    info.calibration = calibration_json(r, r == 1 || r == 4 ? 80 : 100);
    file.ranks.push_back(info);
  }
  file.ranks.push_back({});  // a rank not calibrated: left out
  file.ranks.back().rank = 5;
  file.points_by_rank = {{0, 3}, {1, 2}};
  const auto notes = slow_rank_notes({file});
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].rank.rank, 1);
  EXPECT_EQ(notes[0].points, 2u);
  EXPECT_EQ(notes[0].file, "a.h5");
  EXPECT_NE(notes[0].rank.describe().find("memory_gbps 80 is 20.0% below the median of 5 (100)"), std::string::npos)
      << notes[0].rank.describe();
  EXPECT_EQ(notes[1].rank.rank, 4);
  EXPECT_EQ(notes[1].points, 0u);

  for (auto& info : file.ranks)
    if (!info.calibration.empty()) info.calibration = calibration_json(info.rank, 100);
  EXPECT_TRUE(slow_rank_notes({file}).empty());
}

}  // namespace
}  // namespace ks::report_page
