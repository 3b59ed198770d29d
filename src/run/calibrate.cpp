// `kernelsweep calibrate`: every rank measures its devices as `run` does before its first point (the
// sweep loop over a plan of no points), and rank 0 prints what each rank's devices can do.
#include <cmath>
#include <iostream>
#include <vector>

#include <fmt/format.h>

#include "calibration/calibration.h"
#include "calibration/fleet_health.h"
#include "calibration/probes.h"
#include "cluster/interruption.h"
#include "cluster/mpi_world.h"
#include "cluster/sweep_runner.h"
#include "cluster/worker_process.h"
#include "common/printable.h"
#include "run/run.h"

namespace ks {
namespace {

// Rank 0's: the ranks as they introduced themselves, calibrations included.
class CalibrationSink : public ResultSink {
 public:
  void on_start(const std::vector<RankIdentity>& ranks) override { ranks_ = ranks; }
  void on_record(RunRecord, const nlohmann::json&, const nlohmann::json&, std::optional<RecordDocuments>) override {}
  void on_tick() override {}
  void on_left_skipped(std::size_t) override {}
  const std::vector<RankIdentity>& ranks() const { return ranks_; }

 private:
  std::vector<RankIdentity> ranks_;
};

std::string rate(double value) { return std::isnan(value) ? "-" : fmt::format("{:.4g}", value); }

std::string tflops(const DeviceRates& rates, const char* dtype) { return rate(rates.tflops_of(dtype).value_or(NAN)); }

const char* const kDtypes[] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8"};

// A row per rank: where, what, its memory bandwidth and its throughput per dtype (TFLOP/s), the
// datasheet's bandwidth and bf16 beside them.
std::vector<std::vector<std::string>> table_of(const std::vector<RankIdentity>& ranks) {
  std::vector<std::vector<std::string>> rows{{"rank", "host", "device", "memory_gbps", "copy_gbps", "triad_gbps"}};
  for (const char* dtype : kDtypes) rows.front().push_back(dtype);
  for (const char* extra : {"sheet_gbps", "sheet_bf16", "seconds", "problems"}) rows.front().push_back(extra);
  for (const RankIdentity& rank : ranks) {
    std::vector<std::string> row{std::to_string(rank.rank), rank.host.hostname};
    if (!rank.calibration) {
      row.push_back(rank.problem.empty() ? "not calibrated" : "not calibrated: " + rank.problem);
      rows.push_back(std::move(row));
      continue;
    }
    const DeviceCalibration& device = rank.calibration->primary();
    row.insert(row.end(),
               {device.device, rate(device.measured.memory_gbps), rate(device.copy_gbps), rate(device.triad_gbps)});
    for (const char* dtype : kDtypes) row.push_back(tflops(device.measured, dtype));
    row.push_back(device.datasheet ? rate(device.datasheet->memory_gbps) : "-");
    row.push_back(device.datasheet ? tflops(*device.datasheet, "bf16") : "-");
    row.push_back(rank.calibration->reused ? "kept" : fmt::format("{:.1f}", rank.calibration->seconds));
    row.push_back(fmt::format("{}", fmt::join(device.problems, "; ")));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Columns two spaces apart, a rule under the header.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(rows.front().size());  // no row has more cells than the header
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  const auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t c = 0; c < row.size(); ++c)
      text += (c ? "  " : "") + fmt::format("{:<{}}", row[c], c + 1 < row.size() ? widths[c] : 0);
    std::cout << printable(text) << "\n";
  };
  line(rows.front());
  std::vector<std::string> rule;
  for (std::size_t width : widths) rule.emplace_back(width, '-');
  line(rule);
  for (std::size_t r = 1; r < rows.size(); ++r) line(rows[r]);
}

}  // namespace

int calibrate_ranks(const CalibrateRequest& request, Registry& registry, int* argc, char*** argv) {
  install_stop_handlers();
  MpiWorld world(argc, argv);
  world.set_collective_deadline(collective_deadline());
  const bool root = world.rank() == 0;
  WorkPlan nothing(registry, [](const PointSource&) { return std::vector<Point>(); });
  nothing.seal();
  RunOptions options;
  options.registry = &registry;
  options.executable = current_executable();
  options.allow_shared_gpu = request.allow_shared_gpu;
  options.calibrate = request.fresh ? CalibrationMode::fresh : CalibrationMode::automatic;
  // Kept in --output-dir's calibration/, else $KERNELSWEEP_CALIBRATION_DIR, else nowhere (an empty path).
  options.calibration_folder =
      request.output_directory.empty() ? site_calibration_folder() : calibration_folder(request.output_directory);
  CalibrationSink sink;
  PlanOutcome outcome;
  try {
    outcome = measure_plan(world, root ? &nothing : nullptr, probe_protocol(), options, root ? &sink : nullptr);
  } catch (const RunError& e) {
    if (root) std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
    return kExitBadInput;
  }
  int exit_code = kExitOk;
  if (root) {
    if (!outcome.interrupted.empty()) {
      std::cerr << printable(fmt::format("kernelsweep: calibration interrupted ({})", outcome.interrupted)) << "\n";
      exit_code = kExitInterrupted;
    } else {
      if (request.json) {
        for (const RankIdentity& rank : sink.ranks())
          std::cout << (rank.calibration ? to_json(*rank.calibration)
                                         : nlohmann::json{{"rank", rank.rank},
                                                          {"host", rank.host.hostname},
                                                          {"problem", rank.problem}})
                           .dump()
                    << "\n";
      } else {
        print_table(table_of(sink.ranks()));
      }
      for (const SlowRank& slow : slow_ranks(calibrations_of(sink.ranks())))
        std::cerr << fmt::format("kernelsweep: slow: {} ({} the median of the ranks with the same device; not kept)\n",
                                 slow.describe(), slow_rule());
      for (const RankIdentity& rank : sink.ranks())
        if (!rank.calibration || !rank.calibration->primary().problems.empty()) exit_code = kExitFailure;
    }
  }
  return std::stoi(world.broadcast_from_root(std::to_string(exit_code)));
}

}  // namespace ks
