#include "report/report_tables.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>

#include <fmt/format.h>

#include "report/report_format.h"

namespace ks::report_page {
namespace {

void add_column(Table& table, std::string header, bool numeric) {
  table.headers.push_back(std::move(header));
  table.numeric.push_back(numeric);
}

// Columns of text, in order.
void add_text_columns(Table& table, std::initializer_list<const char*> headers) {
  for (const char* header : headers) add_column(table, header, false);
}

std::string rate(double value) { return std::isfinite(value) && value > 0 ? figure(value) : "—"; }

// A parameter's header: param.NAME where NAME is a column of the table's own (a kernel with a
// parameter called mode), as `kernelsweep show` names it.
std::string parameter_column(const std::string& name) {
  static const std::set<std::string> taken = {"kernel", "implementation", "mode", "status", "file", "message"};
  return taken.contains(name) ? "param." + name : name;
}

// "1.234 TFLOP/s, 5.678 GB/s": the rates of the work the point counts; "—" for none.
std::string rates_text(const RunRecord& run) {
  std::vector<std::string> rates;
  if (std::isfinite(run.flops) && run.flops > 0) rates.push_back(rate(run.tflops) + " TFLOP/s");
  if (std::isfinite(run.bytes) && run.bytes > 0) rates.push_back(rate(run.gbps) + " GB/s");
  return rates.empty() ? "—" : fmt::format("{}", fmt::join(rates, ", "));
}

}  // namespace

Table points_table(const KernelSection& section, bool several_files) {
  Table table;
  add_text_columns(table, {"kernel", "implementation", "mode"});
  for (const auto& p : section.parameters) {
    const bool numbers = std::all_of(section.rows.begin(), section.rows.end(), [&](const PointRow& point) {
      const auto found = point.row->params.find(p);
      return found == point.row->params.end() || found->is_number();
    });
    add_column(table, parameter_column(p), numbers);
  }
  add_column(table, "median (ms)", true);
  add_column(table, "p20–p80 (ms)", true);
  if (section.has_flops) add_column(table, "TFLOP/s", true);
  if (section.has_bytes) add_column(table, "GB/s", true);
  // How close each point came to its device's speed of light, beside its rates, where a point was
  // held against its rank's calibration (as `show` prints them).
  const bool any_speed_of_light = std::any_of(section.rows.begin(), section.rows.end(), [](const PointRow& point) {
    return speed_of_light_was_found(point.row->run);
  });
  if (any_speed_of_light) {
    add_column(table, "sol_pct", true);
    add_column(table, "flags", false);
  }
  // Energy per call, where a GPU's counter gave one (docs/speed-of-light.md, "Energy").
  const bool any_energy = std::any_of(section.rows.begin(), section.rows.end(),
                                      [](const PointRow& point) { return energy_was_measured(point.row->run); });
  if (any_energy) {
    add_column(table, "J/call", true);
    add_column(table, "GFLOP/J", true);
  }
  add_column(table, "peak memory", true);
  add_column(table, "status", false);
  // Where any point was timed while its GPU was held down (power cap, thermal slowdown), what did.
  const bool any_slowed = std::any_of(section.rows.begin(), section.rows.end(),
                                      [](const PointRow& point) { return !slowed_by(point.row->run).empty(); });
  if (any_slowed) add_column(table, "GPU slowed by", false);
  // Where a point was measured several times (a protocol's `repetitions`): the median of its
  // repetitions' medians, and how far apart they lie.
  const bool any_repeated = std::any_of(section.rows.begin(), section.rows.end(),
                                        [](const PointRow& point) { return point.row->repetitions_passed > 1; });
  if (any_repeated) {
    add_column(table, "repetitions", true);
    add_column(table, "median of medians (ms)", true);
    add_column(table, "spread of medians", true);
  }
  if (!section.baseline.empty()) add_column(table, "speed-up over " + section.baseline, true);
  if (!section.reference.empty()) add_column(table, "fraction of " + section.reference, true);
  if (several_files) add_column(table, "file", false);

  table.rows.reserve(section.rows.size());
  for (const PointRow& point : section.rows) {
    const RunRecord& run = point.row->run;
    std::vector<std::string> cells{run.kernel, point.label, run.mode};
    for (const auto& p : section.parameters) {
      const auto found = point.row->params.find(p);
      cells.push_back(found == point.row->params.end() ? "" : parameter_text(*found));
    }
    cells.push_back(ms(run.stats.median_ns));
    cells.push_back(ms_range(run.stats.p20_ns, run.stats.p80_ns));
    if (section.has_flops) cells.push_back(rate(run.tflops));
    if (section.has_bytes) cells.push_back(rate(run.gbps));
    if (any_speed_of_light) {
      cells.push_back(figure(run.sol_pct));
      cells.push_back(run.flags);
    }
    if (any_energy) {
      cells.push_back(figure(run.joules_per_call));
      cells.push_back(figure(run.gflops_per_joule));
    }
    cells.push_back(memory(run.device_peak_bytes));
    cells.push_back(run.status);
    if (any_slowed) cells.push_back(slowed_by(run));
    if (any_repeated) {
      cells.push_back(std::to_string(point.row->repetitions_passed));
      cells.push_back(ms(point.row->median_of_medians_ns));
      cells.push_back(ratio(point.row->repetition_spread));
    }
    if (!section.baseline.empty()) cells.push_back(ratio(point.speedup));
    if (!section.reference.empty()) cells.push_back(ratio(point.fraction));
    if (several_files) cells.push_back(point.row->file);
    table.rows.push_back(std::move(cells));
    table.row_ids.push_back(run.point_id);
    table.row_classes.push_back(run.status);
  }
  return table;
}

Table failures_table(const KernelSection& section, bool several_files) {
  Table table;
  add_text_columns(table, {"implementation", "mode", "parameters", "status", "message"});
  if (several_files) add_column(table, "file", false);
  for (const PointRow& point : section.rows) {
    const RunRecord& run = point.row->run;
    if (run.status == "passed") continue;
    std::vector<std::string> cells{point.label, run.mode, parameters_text(point.row->params, section.parameters),
                                   run.status, run.message};
    if (several_files) cells.push_back(point.row->file);
    table.rows.push_back(std::move(cells));
    table.row_ids.push_back(run.point_id);
    table.row_classes.push_back(run.status);
  }
  return table;
}

Table flagged_table(const ReportModel& model) {
  Table table;
  for (const char* header : {"kernel", "implementation", "mode", "parameters", "rank", "rate", "flag", "what it means"})
    add_column(table, header, std::string_view(header) == "rank");
  const bool several_files = model.files.size() > 1;
  if (several_files) add_column(table, "file", false);
  for (const FlaggedPoint& flagged : model.flagged) {
    const RunRecord& run = flagged.row->run;
    std::vector<std::string> cells{run.kernel,
                                   run.implementation,
                                   run.mode,
                                   parameters_text(flagged.row->params),
                                   std::to_string(run.rank),
                                   rates_text(run),
                                   flagged.flag,
                                   flagged.meaning};
    if (several_files) cells.push_back(flagged.row->file);
    // No row ids: a point's id marks its row in its kernel's table, the one place it is shown whole.
    table.rows.push_back(std::move(cells));
  }
  return table;
}

Table speedups_table(const KernelSection& section) {
  Table table;
  add_text_columns(table, {"implementation", "mode"});
  add_column(table, "speed-up over " + section.baseline + " (geometric mean)", true);
  add_column(table, "points", true);
  for (const Speedup& s : section.speedups)
    table.rows.push_back({s.label, s.mode, ratio(s.geometric_mean), std::to_string(s.points)});
  return table;
}

Table files_table(const ReportModel& model) {
  Table table;
  add_text_columns(table, {"file", "sweep", "host", "started", "ended"});
  add_column(table, "points", true);
  add_text_columns(table, {"statuses", "hardware"});
  for (const FileSummary& file : model.files) {
    std::string statuses;
    for (const auto& [status, count] : file.statuses)
      statuses += fmt::format("{}{} {}", statuses.empty() ? "" : ", ", count, status);
    table.rows.push_back({file.path, file.info.sweep_name, file.info.host, file.info.started_at,
                          file.info.ended_at.empty() ? "(not finished)" : file.info.ended_at,
                          std::to_string(file.points), statuses, fmt::format("{}", fmt::join(file.hardware, "; "))});
  }
  return table;
}

Table document_table(const CitedDocument& document) {
  Table table;
  add_text_columns(table, {"field", "value"});
  for (const auto& [field, value] : document.fields) table.rows.push_back({field, value});
  return table;
}

}  // namespace ks::report_page
