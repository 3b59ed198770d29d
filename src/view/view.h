#pragma once
// The current view of results files, the one definition that show, report, compare and merge use:
// per point, its latest row (rows are appended in arrival order, so a rerun after --resume replaces
// what came before), with its parameters parsed. Figures a point did not measure are NaN in the file
// (cluster/run_record.h: kNotMeasured). And the calibrations a file keeps in /ranks, read back.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/calibration.h"
#include "store/results_file.h"

namespace ks {

struct ViewRow {
  StoredRun run;                    // the point's latest row
  nlohmann::json params;            // run.params_json, parsed
  std::string file;                 // the results file it comes from, as given
  std::uint64_t row = 0;            // its index in /runs
  std::uint64_t rows_of_point = 1;  // the point's rows in that file (more than 1 after a rerun)
  // Under a protocol's `repetitions`: the point's repetitions that passed (the latest row of each),
  // the median of their medians and its spread (the largest median over the smallest); 1, the
  // point's median and NaN for a point measured once.
  std::int64_t repetitions_passed = 0;
  double median_of_medians_ns = std::nan("");
  double repetition_spread = std::nan("");
};

// What a point's repetitions (protocol `repetitions`) say together: those that passed (the latest
// passed row of each), the median of their medians and its spread (the largest median over the
// smallest; NaN for fewer than two). `passed_medians` are (repetition, median) of the point's passed
// rows, in row order.
struct RepetitionSummary {
  std::int64_t passed = 0;
  double median_of_medians_ns = std::nan("");
  double spread = std::nan("");
};
RepetitionSummary summarize_repetitions(std::vector<std::pair<std::int32_t, double>> passed_medians);

// Every point of `file` once, by its latest row, in the order the points first appear.
std::vector<ViewRow> current_view(const ResultsFile& file, const std::string& file_label);

// The view of several files, one after the other (a point in two files appears twice).
std::vector<ViewRow> current_view(const std::vector<std::string>& files);

// "M=256 dtype=fp32": a point's parameters as a line of text, strings bare; with `names`, those of
// them the point has, in that order. Tables, failures, plot lines and messages all name points so.
std::string parameters_text(const nlohmann::json& params);
std::string parameters_text(const nlohmann::json& params, const std::vector<std::string>& names);

// How parameter values sort wherever points are listed (show's rows, the report's tables and plot
// lines): numbers by value before text, text alphabetically, a missing value (nullptr) last. <0, 0
// or >0, as std::string::compare.
int compare_parameter_values(const nlohmann::json* a, const nlohmann::json* b);

// The calibrations of a file's /ranks: what `status` and the report hold each rank's figures
// against (calibration/fleet_health.h). Each rank's latest row (a resumed run adds a row where the
// rank measured again, or reused what it kept); a rank not calibrated, or whose calibration does not
// parse, is left out. In rank order.
std::vector<RankCalibration> rank_calibrations(const std::vector<RankInfo>& ranks);

// True when the point was timed (its figures are measurements, not NaN): it has timed repetitions,
// or it was imported from another tool's results with a median but no repetitions or samples
// (docs/import.md). Files written before untimed figures were NaN hold 0 there, hence the > 0.
inline bool timed(const RunRecord& run) {
  return run.n_repeat > 0 || (std::isfinite(run.stats.median_ns) && run.stats.median_ns > 0);
}

}  // namespace ks
