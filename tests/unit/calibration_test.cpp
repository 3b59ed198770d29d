// A rank's calibration (the probe points, the rates made of their results, the datasheets, the cache
// in the output folder) and a point's speed of light against it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "calibration/calibration.h"
#include "calibration/calibration_cache.h"
#include "calibration/datasheets.h"
#include "calibration/probes.h"
#include "calibration/speed_of_light.h"
#include "measure/do_bench.h"
#include "support/cli_runner.h"
#include "support/kernels.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

// A GPU that moves 3000 GB/s and multiplies 60 TFLOP/s in fp32, 400 in tf32, 800 in bf16, with a
// datasheet of 3350 GB/s and 990 TFLOP/s in bf16.
DeviceCalibration gpu_device() {
  DeviceCalibration d;
  d.backend = "cuda";
  d.device = "NVIDIA H100 80GB HBM3";
  d.measured.memory_gbps = 3000;
  d.measured.tflops = {{"fp32", 60}, {"tf32", 400}, {"bf16", 800}};
  DeviceRates sheet;
  sheet.memory_gbps = 3350;
  sheet.tflops = {{"fp32", 67}, {"tf32", 495}, {"bf16", 990}};
  d.datasheet = sheet;
  return d;
}

TEST(SpeedOfLight, AMemoryBoundPointIsItsBandwidthOverTheDevicesAndItsFloorIsTheBytes) {
  // 3 GB in 2 ms: 1500 GB/s, half the device's 3000.
  const SpeedOfLight sol = speed_of_light(1e9, 3e9, 2e6, "bf16", gpu_device());
  EXPECT_DOUBLE_EQ(sol.bandwidth_pct, 50);
  EXPECT_DOUBLE_EQ(sol.compute_pct, 100 * (1e9 / 2e6 / 1e3) / 800);
  EXPECT_DOUBLE_EQ(sol.sol_pct, 50);  // floor 1 ms (the bytes) of 2 ms
  EXPECT_EQ(sol.flags, "");
}

TEST(SpeedOfLight, AComputeBoundPointsFloorIsItsFlopsAtTheDtypesRate) {
  // 2·4096³ FLOPs of bf16 in 0.25 ms: 550 TFLOP/s of 800.
  const double flops = 2.0 * 4096 * 4096 * 4096, bytes = 3.0 * 2 * 4096 * 4096;
  const SpeedOfLight sol = speed_of_light(flops, bytes, 0.25e6, "bf16", gpu_device());
  EXPECT_NEAR(sol.compute_pct, 100 * (flops / 0.25e6 / 1e3) / 800, 1e-9);
  EXPECT_NEAR(sol.sol_pct, 100 * (flops / 800e3) / 0.25e6, 1e-9);
  EXPECT_EQ(sol.flags, "");
}

TEST(SpeedOfLight, Fp32DataOnAGpuCountsTf32sRateAndAMissingDtypeIsFp32) {
  // 100 TFLOP/s of fp32 data: above 1.5 × the plain fp32 rate, not above TF32's.
  const SpeedOfLight sol = speed_of_light(100e12 * 1e-3, 0, 1e6, "fp32", gpu_device());
  EXPECT_DOUBLE_EQ(sol.compute_pct, 25);
  EXPECT_EQ(sol.flags, "");
  EXPECT_DOUBLE_EQ(speed_of_light(100e12 * 1e-3, 0, 1e6, "", gpu_device()).compute_pct, 25);
  DeviceCalibration cpu;
  cpu.backend = "cpu";
  cpu.measured.memory_gbps = 20;
  cpu.measured.tflops = {{"fp32", 0.5}, {"fp64", 0.25}};
  EXPECT_DOUBLE_EQ(speed_of_light(0.4e9, 0, 1e6, "fp32", cpu).compute_pct, 80);
  // A CPU computes bf16 data in fp32: 2.8 TFLOP/s of it is implausible on a 0.5 TFLOP/s CPU.
  EXPECT_DOUBLE_EQ(speed_of_light(0.4e9, 0, 1e6, "bf16", cpu).compute_pct, 80);
  EXPECT_EQ(speed_of_light(2.8e9, 0, 1e6, "bf16", cpu).flags, "implausible");
}

TEST(SpeedOfLight, ARateAboveOneAndAHalfTimesTheMeasuredOrTheDatasheetsFigureIsImplausible) {
  // 90,893 GB/s: a backward pass whose work model counts bytes nothing moves.
  EXPECT_TRUE(has_flag(speed_of_light(0, 90893e9 * 1e-3, 1e6, "bf16", gpu_device()).flags, "implausible"));
  // 4600 GB/s: more than 1.5 × 3000 measured, less than 1.5 × 3350 of the datasheet.
  EXPECT_TRUE(has_flag(speed_of_light(0, 4600e9 * 1e-3, 1e6, "bf16", gpu_device()).flags, "implausible"));
  // 4400 GB/s: within 1.5 × both.
  EXPECT_FALSE(has_flag(speed_of_light(0, 4400e9 * 1e-3, 1e6, "bf16", gpu_device()).flags, "implausible"));
  // 1300 TFLOP/s of bf16: above 1.5 × 800 measured.
  EXPECT_TRUE(has_flag(speed_of_light(1300e12 * 1e-3, 0, 1e6, "bf16", gpu_device()).flags, "implausible"));
  // A device whose measured rate is low but whose datasheet is known: 1.5 × the datasheet decides too.
  DeviceCalibration slow = gpu_device();
  slow.measured.memory_gbps = std::nan("");
  EXPECT_TRUE(has_flag(speed_of_light(0, 5100e9 * 1e-3, 1e6, "bf16", slow).flags, "implausible"));
  EXPECT_FALSE(has_flag(speed_of_light(0, 5000e9 * 1e-3, 1e6, "bf16", slow).flags, "implausible"));
}

TEST(SpeedOfLight, APointWhoseBytesFitInTheLastLevelCacheIsNotHeldToMemorysBandwidth) {
  DeviceCalibration cached = gpu_device();
  cached.cache_bytes = 50 << 20;
  // 40 MB at 10,000 GB/s: from the L2, not memory; its bandwidth_pct says how far above memory.
  const SpeedOfLight in_cache = speed_of_light(0, 40e6, 40e6 / 10000, "bf16", cached);
  EXPECT_EQ(in_cache.flags, "in-cache");
  EXPECT_NEAR(in_cache.bandwidth_pct, 100 * 10000.0 / 3000, 1e-9);
  // 60 MB at the same rate cannot fit: implausible.
  EXPECT_EQ(speed_of_light(0, 60e6, 60e6 / 10000, "bf16", cached).flags, "implausible");
  // Its FLOPs are still held to the device's rate.
  EXPECT_EQ(speed_of_light(1300e12 * 1e-3, 40e6, 1e6, "bf16", cached).flags, "implausible,in-cache");
}

// Two ranks that calibrated one CPU at once each got half its memory: one rank alone may reach all of it.
TEST(SpeedOfLight, ACpuMeasuredByRanksAtOnceBoundsOneRankByTheirSum) {
  DeviceCalibration share;
  share.backend = "cpu";
  share.measured.memory_gbps = 20;
  share.measured.tflops = {{"fp32", 0.25}};
  share.measured_beside = 2;
  const SpeedOfLight alone = speed_of_light(0, 38e9 * 1e-3, 1e6, "fp32", share);  // 38 GB/s
  EXPECT_DOUBLE_EQ(alone.bandwidth_pct, 190);
  EXPECT_EQ(alone.flags, "");
  EXPECT_EQ(speed_of_light(0, 61e9 * 1e-3, 1e6, "fp32", share).flags, "implausible");
  EXPECT_EQ(speed_of_light(0.7e9, 0, 1e6, "fp32", share).flags, "");
  EXPECT_EQ(speed_of_light(0.8e9, 0, 1e6, "fp32", share).flags, "implausible");
}

TEST(SpeedOfLight, NoWorkIsFlaggedAndAPointNotTimedHasNoFigures) {
  const SpeedOfLight none = speed_of_light(0, 0, 1e6, "bf16", gpu_device());
  EXPECT_EQ(none.flags, "no-work");
  EXPECT_TRUE(std::isnan(none.sol_pct));
  EXPECT_EQ(speed_of_light(std::nan(""), std::nan(""), 1e6, "bf16", gpu_device()).flags, "no-work");
  const SpeedOfLight untimed = speed_of_light(1e9, 1e9, std::nan(""), "bf16", gpu_device());
  EXPECT_EQ(untimed.flags, "");
  EXPECT_TRUE(std::isnan(untimed.bandwidth_pct) && std::isnan(untimed.compute_pct) && std::isnan(untimed.sol_pct));
}

TEST(SpeedOfLight, AnUncalibratedDeviceGivesNoPercentagesButTheDatasheetStillFlags) {
  DeviceCalibration unknown;
  unknown.backend = "cuda";
  const SpeedOfLight sol = speed_of_light(1e9, 1e9, 1e6, "bf16", unknown);
  EXPECT_TRUE(std::isnan(sol.bandwidth_pct) && std::isnan(sol.compute_pct) && std::isnan(sol.sol_pct));
  EXPECT_EQ(sol.flags, "");
}

TEST(SpeedOfLight, FlagsAreFoundWhole) {
  EXPECT_TRUE(has_flag("implausible,no-work", "no-work"));
  EXPECT_TRUE(has_flag("implausible", "implausible"));
  EXPECT_FALSE(has_flag("implausible", "plausible"));
  EXPECT_FALSE(has_flag("", "implausible"));
}

TEST(Datasheets, KnowTheGpusByTheDriversNames) {
  const auto h100 = datasheet_of("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100.has_value());
  EXPECT_EQ(h100->rates.memory_gbps, 3350);
  EXPECT_NEAR(*h100->rates.tflops_of("bf16"), 989.4, 1e-9);
  EXPECT_FALSE(h100->source.empty());
  EXPECT_EQ(datasheet_of("NVIDIA H200")->rates.memory_gbps, 4800);
  EXPECT_EQ(datasheet_of("NVIDIA H100 PCIe")->rates.memory_gbps, 2000);
  EXPECT_EQ(datasheet_of("NVIDIA A100-SXM4-80GB")->rates.memory_gbps, 2039);
  EXPECT_EQ(datasheet_of("NVIDIA A100-SXM4-40GB")->rates.memory_gbps, 1555);
  EXPECT_FALSE(datasheet_of("NVIDIA A100-SXM4-40GB")->rates.tflops_of("fp8").has_value());
  EXPECT_FALSE(datasheet_of("NVIDIA GeForce RTX 4090").has_value());
  EXPECT_FALSE(datasheet_of("NVIDIA H200 NVL").has_value());  // not in the table: its figures differ
}

TEST(Calibration, ReadsBackWhatItWritesForACpuRankAndAGpuRank) {
  RankCalibration gpu_rank;
  gpu_rank.rank = 3;
  gpu_rank.host = "node7";
  gpu_rank.seconds = 6.5;
  gpu_rank.measured_at = "2026-12-07T10:00:00.000Z";
  gpu_rank.cpu.backend = "cpu";
  gpu_rank.cpu.device = "AMD EPYC 9654";
  gpu_rank.cpu.cores = 12;
  gpu_rank.cpu.measured_beside = 4;
  gpu_rank.cpu.measured.memory_gbps = 80;
  gpu_rank.cpu.measured.tflops = {{"fp32", 1.5}, {"fp64", 0.75}};
  gpu_rank.gpu = gpu_device();
  gpu_rank.gpu->uuid = "GPU-1234";
  gpu_rank.gpu->copy_gbps = 2900;
  gpu_rank.gpu->cache_bytes = 50 << 20;
  gpu_rank.gpu->problems = {"peak_flops fp8: error: no fp8 here"};
  const Json json = to_json(gpu_rank);
  EXPECT_EQ(json.at("device"), "NVIDIA H100 80GB HBM3");  // the GPU at the top
  EXPECT_EQ(json.at("memory_gbps"), 3000);
  EXPECT_EQ(json.at("tflops").at("bf16"), 800);
  EXPECT_EQ(json.at("datasheet").at("memory_gbps"), 3350);
  EXPECT_TRUE(json.at("triad_gbps").is_null());
  EXPECT_EQ(json.at("cpu").at("device"), "AMD EPYC 9654");
  const RankCalibration back = rank_calibration_from_json(json);
  ASSERT_TRUE(back.gpu.has_value());
  EXPECT_EQ(back.gpu->uuid, "GPU-1234");
  EXPECT_EQ(back.gpu->copy_gbps, 2900);
  EXPECT_EQ(back.gpu->cache_bytes, 50 << 20);
  EXPECT_TRUE(std::isnan(back.gpu->triad_gbps));
  EXPECT_EQ(back.gpu->problems, gpu_rank.gpu->problems);
  EXPECT_EQ(*back.gpu->datasheet->tflops_of("bf16"), 990);
  EXPECT_EQ(back.cpu.cores, 12);
  EXPECT_EQ(back.cpu.measured_beside, 4);
  EXPECT_EQ(*back.cpu.measured.tflops_of("fp64"), 0.75);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.seconds, 6.5);

  RankCalibration cpu_rank;
  cpu_rank.host = "laptop";
  cpu_rank.cpu = gpu_rank.cpu;
  const Json cpu_json = to_json(cpu_rank);
  EXPECT_FALSE(cpu_json.contains("cpu"));
  EXPECT_TRUE(cpu_json.at("datasheet").is_null());
  EXPECT_FALSE(rank_calibration_from_json(cpu_json).gpu.has_value());
}

TEST(CalibrationProbes, ACpuMeasuresStreamAndFmaChainsAndAGpuStreamAndEveryDtypesProduct) {
  const Registry& registry = builtin_registry();
  // Four times the last-level cache, 64 to 512 MiB.
  const std::int64_t cpu_stream_mib =
      std::clamp<std::int64_t>(4 * ((cpu_last_level_cache_bytes() + (1 << 20) - 1) >> 20), 64, 512);
  std::vector<std::string> cpu, gpu;
  for (const Probe& p : probe_points(Backend::cpu, registry))
    cpu.push_back(p.figure + " " + p.point.kernel + "/" + p.point.implementation +
                  " mib=" + p.point.params.value("mib", Json(0)).dump());
  for (const Probe& p : probe_points(Backend::cuda, registry))
    gpu.push_back(p.figure + " " + p.point.kernel + "/" + p.point.implementation +
                  " mib=" + p.point.params.value("mib", Json(0)).dump());
  EXPECT_EQ(cpu, (std::vector<std::string>{"copy stream/cpu mib=" + std::to_string(cpu_stream_mib),
                                           "triad stream/cpu mib=" + std::to_string(cpu_stream_mib),
                                           "fp32 fma_chains/cpu mib=0", "fp64 fma_chains/cpu mib=0"}));
  EXPECT_EQ(gpu, (std::vector<std::string>{"copy stream/cuda mib=1024", "triad stream/cuda mib=1024",
                                           "fp64 peak_flops/cuda mib=0", "fp32 peak_flops/cuda mib=0",
                                           "tf32 peak_flops/cuda mib=0", "bf16 peak_flops/cuda mib=0",
                                           "fp16 peak_flops/cuda mib=0", "fp8 peak_flops/cuda mib=0"}));
  for (const Probe& p : probe_points(Backend::cuda, registry))
    if (p.point.kernel == "peak_flops") {
      EXPECT_EQ(p.point.params.at("dtype"), p.figure);
      const bool slow = p.figure == "fp64" || p.figure == "fp32" || p.figure == "tf32";
      EXPECT_EQ(p.point.params.at("size"), slow ? 4096 : 8192) << p.figure;
    }
}

// The rates come from each probe's work and median; a probe that did not pass leaves its rate out
// and says why; memory is the better of copy and triad.
TEST(CalibrationProbes, RatesComeFromEachProbesWorkAndMedian) {
  const Registry& registry = builtin_registry();
  const ProbeRunner run = [&](const Point& point) {
    const std::string op = point.params.value("op", "");
    if (point.kernel == "fma_chains" && point.params.at("dtype") == "fp64")
      return ProbeResult{"error", "no fp64 units", std::nan("")};
    const Work work = registry.find(point.kernel)->work_of(point.params, point.mode);
    // copy at 10 GB/s, triad at 12, fp32 at 0.2 TFLOP/s.
    if (op == "copy") return ProbeResult{"passed", "", work.bytes / 10};
    if (op == "triad") return ProbeResult{"passed", "", work.bytes / 12};
    return ProbeResult{"passed", "", work.flops / 200};
  };
  HostInfo host;
  host.hostname = "here";
  host.cpu_model = "Some CPU";
  host.cpus_allowed = 2;
  const RankCalibration calibration = calibrate_rank(1, host, GpuInfo{}, registry, run);
  EXPECT_FALSE(calibration.gpu.has_value());
  EXPECT_EQ(calibration.rank, 1);
  EXPECT_EQ(calibration.cpu.device, "Some CPU");
  EXPECT_EQ(calibration.cpu.cores, 2);
  EXPECT_NEAR(calibration.cpu.copy_gbps, 10, 1e-9);
  EXPECT_NEAR(calibration.cpu.triad_gbps, 12, 1e-9);
  EXPECT_NEAR(calibration.cpu.measured.memory_gbps, 12, 1e-9);
  EXPECT_NEAR(*calibration.cpu.measured.tflops_of("fp32"), 0.2, 1e-12);
  EXPECT_FALSE(calibration.cpu.measured.tflops_of("fp64").has_value());
  ASSERT_EQ(calibration.cpu.problems.size(), 1u);
  EXPECT_EQ(calibration.cpu.problems[0], "fma_chains fp64: error: no fp64 units");
  EXPECT_FALSE(calibration.cpu.datasheet.has_value());
}

TEST(CalibrationCache, KeepsOneFilePerHostGpuAndCoresAndReadsItBackMarkedReused) {
  const fs::path dir = fresh_directory("calibration_cache");
  HostInfo host;
  host.hostname = "node 1";
  host.cpus_allowed = 4;
  GpuInfo gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-ab/cd";
  gpu.driver_version = "580.159.04";
  const fs::path file = calibration_cache_file(dir, host, gpu);
  EXPECT_EQ(file.parent_path(), dir);
  EXPECT_EQ(file.filename().string(), "node_1.GPU-ab_cd.driver-580.159.04.4-cores.1-ranks.json");
  GpuInfo none;
  EXPECT_NE(calibration_cache_file(dir, host, none), file);
  EXPECT_NE(calibration_cache_file(dir, host, gpu, 2), file);
  host.cpus_allowed = 8;
  EXPECT_NE(calibration_cache_file(dir, host, gpu), file);

  EXPECT_FALSE(read_cached_calibration(file).has_value());
  RankCalibration calibration;
  calibration.host = "node 1";
  calibration.cpu.backend = "cpu";
  calibration.cpu.measured.memory_gbps = 40;
  write_cached_calibration(file, calibration);
  const auto back = read_cached_calibration(file);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->reused);
  EXPECT_EQ(back->cpu.measured.memory_gbps, 40);
  write_file(file, "{\"not\": \"a calibration\"}");
  EXPECT_FALSE(read_cached_calibration(file).has_value());
}

}  // namespace
}  // namespace ks::testing
