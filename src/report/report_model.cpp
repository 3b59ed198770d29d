#include "report/report_model.h"
#include "calibration/speed_of_light.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "measure/do_bench.h"
#include "report/report_files.h"
#include "report/report_format.h"
#include "report/report_speed_of_light.h"

namespace ks::report_page {
namespace {

using Json = nlohmann::json;

// A parameter named seed picks random inputs, not a shape: points that differ only in it are
// repetitions, never the axis of a plot while another parameter varies.
constexpr const char* kReplicateParameter = "seed";

// Plots keep at most this many series, and a series at most this many points, however large the file.
constexpr std::size_t kMaxSeries = 12;
constexpr std::size_t kMaxSeriesPoints = 200;

std::string file_stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// --- labels: an implementation, and its file where several files hold it ----------------------

// kernel -> implementation -> the files that hold it, in the order of the files.
using ImplementationFiles = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

ImplementationFiles implementation_files(const std::vector<ViewRow>& view) {
  ImplementationFiles out;
  for (const ViewRow& row : view) {
    auto& files = out[row.run.kernel][row.run.implementation];
    if (std::find(files.begin(), files.end(), row.file) == files.end()) files.push_back(row.file);
  }
  return out;
}

std::string label_of(const ViewRow& row, const ImplementationFiles& files,
                     const std::set<std::string>& ambiguous_stems) {
  const auto& holders = files.at(row.run.kernel).at(row.run.implementation);
  if (holders.size() < 2) return row.run.implementation;
  const std::string file = ambiguous_stems.count(file_stem(row.file)) ? row.file : file_stem(row.file);
  return fmt::format("{} ({})", row.run.implementation, file);
}

// Stems that two different files share: those files are named by their path instead.
std::set<std::string> ambiguous_stems(const std::vector<LoadedFile>& files) {
  std::map<std::string, std::set<std::string>> paths_by_stem;
  for (const auto& f : files) paths_by_stem[file_stem(f.path)].insert(f.path);
  std::set<std::string> out;
  for (const auto& [stem, paths] : paths_by_stem)
    if (paths.size() > 1) out.insert(stem);
  return out;
}

// --- ordering --------------------------------------------------------------------------------

const Json& parameter_or_null(const ViewRow& row, const std::string& name) {
  static const Json null_value;
  const auto found = row.params.find(name);
  return found == row.params.end() ? null_value : *found;
}

void sort_rows(KernelSection& section) {
  std::map<std::string, std::size_t> mode_order;
  for (std::size_t i = 0; i < section.modes.size(); ++i) mode_order[section.modes[i]] = i;
  // The swept parameter last among the parameters: a shape's implementations sit together, and the
  // shapes of a line follow each other.
  std::vector<std::string> order;
  for (const auto& p : section.parameters)
    if (p != section.swept_parameter) order.push_back(p);
  if (!section.swept_parameter.empty()) order.push_back(section.swept_parameter);
  std::stable_sort(section.rows.begin(), section.rows.end(), [&](const PointRow& a, const PointRow& b) {
    const std::size_t ma = mode_order[a.row->run.mode], mb = mode_order[b.row->run.mode];
    if (ma != mb) return ma < mb;
    for (const auto& p : order) {
      const auto x = a.row->params.find(p), y = b.row->params.find(p);
      const int c =
          compare_parameter_values(x == a.row->params.end() ? nullptr : &*x, y == b.row->params.end() ? nullptr : &*y);
      if (c != 0) return c < 0;
    }
    return a.label < b.label;
  });
}

// --- the swept parameter ----------------------------------------------------------------------

std::size_t distinct_values(const std::vector<PointRow>& rows, const std::string& parameter) {
  std::set<std::string> values;
  for (const auto& r : rows) values.insert(parameter_or_null(*r.row, parameter).dump());
  return values.size();
}

bool numeric_parameter(const std::vector<PointRow>& rows, const std::string& parameter) {
  return std::all_of(rows.begin(), rows.end(), [&](const PointRow& r) {
    const Json& v = parameter_or_null(*r.row, parameter);
    return v.is_number() && !v.is_boolean();
  });
}

// The parameter with the most distinct values (numbers before text, then alphabetically); seed only
// when nothing else varies. Empty when no parameter varies.
std::string swept_parameter(const std::vector<PointRow>& rows, const std::vector<std::string>& parameters) {
  std::string best;
  std::size_t best_count = 1;
  bool best_numeric = false;
  for (const auto& p : parameters) {
    if (p == kReplicateParameter) continue;
    const std::size_t count = distinct_values(rows, p);
    const bool numeric = numeric_parameter(rows, p);
    if (count > best_count || (count == best_count && count > 1 && numeric && !best_numeric)) {
      best = p;
      best_count = count;
      best_numeric = numeric;
    }
  }
  if (best.empty() && std::find(parameters.begin(), parameters.end(), kReplicateParameter) != parameters.end() &&
      distinct_values(rows, kReplicateParameter) > 1)
    return kReplicateParameter;
  return best;
}

// True when each value of `axis` comes with one value of `other` (they are swept together).
bool follows(const std::vector<PointRow>& rows, const std::string& axis, const std::string& other) {
  std::map<std::string, std::string> value_at;
  for (const auto& r : rows) {
    const auto [at, added] =
        value_at.try_emplace(parameter_or_null(*r.row, axis).dump(), parameter_or_null(*r.row, other).dump());
    if (!added && at->second != parameter_or_null(*r.row, other).dump()) return false;
  }
  return true;
}

// --- line plots -----------------------------------------------------------------------------------

struct SeriesKey {
  std::string label, combination;
  bool operator<(const SeriesKey& other) const {
    return std::tie(label, combination) < std::tie(other.label, other.combination);
  }
};

LinePlot line_plot(const KernelSection& section, const std::string& mode, const std::vector<std::string>& others,
                   const LegendHardware& legend_hardware) {
  LinePlot plot;
  plot.name = slug(section.kernel) + "-" + slug(mode);
  plot.title = fmt::format("{} · {}", section.kernel, mode);
  plot.x_parameter = section.swept_parameter;
  const bool numeric = numeric_parameter(section.rows, section.swept_parameter);
  if (!numeric) {  // categories in table order, which sorts values
    for (const auto& r : section.rows) {
      const std::string v = parameter_text(parameter_or_null(*r.row, plot.x_parameter));
      if (std::find(plot.categories.begin(), plot.categories.end(), v) == plot.categories.end())
        plot.categories.push_back(v);
    }
  }
  const auto x_of = [&](const ViewRow& row) {
    const Json& v = parameter_or_null(row, plot.x_parameter);
    if (numeric) return v.get<double>();
    const auto at = std::find(plot.categories.begin(), plot.categories.end(), parameter_text(v));
    return static_cast<double>(at - plot.categories.begin());
  };

  // The points of each series at each x (several where only the seed differs).
  std::map<SeriesKey, std::map<double, std::vector<const ViewRow*>>> grouped;
  std::map<std::string, std::size_t> points_per_combination;
  std::vector<std::string> combination_order;
  bool merged = false;
  for (const auto& r : section.rows) {
    if (r.row->run.mode != mode || !measured(*r.row)) continue;
    const std::string combination = parameters_text(r.row->params, others);
    if (points_per_combination[combination]++ == 0) combination_order.push_back(combination);
    auto& at_x = grouped[{r.label, combination}][x_of(*r.row)];
    at_x.push_back(r.row);
    merged = merged || at_x.size() > 1;
  }
  if (grouped.empty()) return plot;

  // Within reason: the combinations with the most points, as many as fit kMaxSeries lines.
  std::set<std::string> labels;
  for (const auto& [key, points] : grouped) labels.insert(key.label);
  const std::size_t combinations_kept = std::max<std::size_t>(1, kMaxSeries / labels.size());
  std::vector<std::string> by_count = combination_order;
  std::stable_sort(by_count.begin(), by_count.end(), [&](const std::string& a, const std::string& b) {
    return points_per_combination[a] > points_per_combination[b];
  });
  by_count.resize(std::min(by_count.size(), combinations_kept));
  const std::set<std::string> kept(by_count.begin(), by_count.end());

  for (const auto& [key, by_x] : grouped) {
    if (!kept.count(key.combination)) continue;
    if (plot.series.size() == kMaxSeries) break;
    Series series;
    series.title = key.label;
    const auto hardware = legend_hardware.find(by_x.begin()->second.front()->file);
    if (hardware != legend_hardware.end()) series.title += " · " + hardware->second;
    if (!key.combination.empty()) series.title += " " + key.combination;
    for (const auto& [x, rows] : by_x) {
      std::vector<double> medians, p20s, p80s;
      for (const ViewRow* row : rows) {
        const auto& s = row->run.stats;
        medians.push_back(s.median_ns / 1e6);
        p20s.push_back((std::isfinite(s.p20_ns) ? s.p20_ns : s.median_ns) / 1e6);
        p80s.push_back((std::isfinite(s.p80_ns) ? s.p80_ns : s.median_ns) / 1e6);
      }
      series.points.push_back({x, median_of(medians), median_of(p20s), median_of(p80s)});
    }
    series.points = evenly_thinned(std::move(series.points), kMaxSeriesPoints);
    plot.series.push_back(std::move(series));
  }

  std::vector<std::string> notes;
  if (combination_order.size() > kept.size())
    notes.push_back(
        fmt::format("{} of {} combinations of {} drawn (those with the most points); the table has every point",
                    kept.size(), combination_order.size(), fmt::join(others, ", ")));
  if (merged) notes.push_back("points that differ only in seed are drawn as one: the median of their figures");
  if (std::any_of(plot.series.begin(), plot.series.end(),
                  [](const Series& s) { return s.points.size() == kMaxSeriesPoints; }))
    notes.push_back(fmt::format("lines with more than {} values of {} are thinned to {} evenly spaced ones",
                                kMaxSeriesPoints, plot.x_parameter, kMaxSeriesPoints));
  plot.note = fmt::format("{}", fmt::join(notes, "; "));
  return plot;
}

// --- sections ---------------------------------------------------------------------------------------

// A kernel's floor, when the sweep measured it: what its other implementations are a fraction of,
// unless --reference names another (distill_cosine_loss's gemm_floor: the pass's matrix products alone).
constexpr const char* kDefaultReference = "gemm_floor";

bool in_every_point(const std::vector<PointRow>& rows, const std::string& parameter) {
  return std::all_of(rows.begin(), rows.end(), [&](const PointRow& r) { return r.row->params.contains(parameter); });
}

// A parameter every point has with the same value is said once for the kernel, not in every row:
// a sweep fixes most of its parameters, and the tables would be mostly repetition.
void split_fixed_parameters(KernelSection& section) {
  std::vector<std::string> varying;
  for (const auto& p : section.parameters) {
    if (in_every_point(section.rows, p) && distinct_values(section.rows, p) == 1)
      section.fixed.emplace_back(p, parameter_text(section.rows.front().row->params.at(p)));
    else varying.push_back(p);
  }
  section.parameters = std::move(varying);
}

KernelSection section_of(const std::string& kernel, std::vector<PointRow> rows, const ModelOptions& options,
                         const LegendHardware& legend_hardware) {
  KernelSection section;
  section.kernel = kernel;
  section.rows = std::move(rows);
  std::set<std::string> parameters, labels;
  for (const auto& r : section.rows) {
    for (const auto& [key, value] : r.row->params.items()) parameters.insert(key);
    labels.insert(r.label);
    if (std::find(section.modes.begin(), section.modes.end(), r.row->run.mode) == section.modes.end())
      section.modes.push_back(r.row->run.mode);
    section.has_flops = section.has_flops || (std::isfinite(r.row->run.flops) && r.row->run.flops > 0);
    section.has_bytes = section.has_bytes || (std::isfinite(r.row->run.bytes) && r.row->run.bytes > 0);
  }
  section.parameters.assign(parameters.begin(), parameters.end());
  section.labels.assign(labels.begin(), labels.end());
  section.swept_parameter = swept_parameter(section.rows, section.parameters);
  sort_rows(section);
  split_fixed_parameters(section);

  section.baseline = options.baseline.empty() ? default_baseline(section) : resolve_label(options.baseline, section);
  if (section.baseline.empty())
    section.notes += fmt::format("No speed-ups: no {} point of this kernel. ", options.baseline);
  if (!options.reference.empty()) {
    section.reference = resolve_label(options.reference, section);
    if (section.reference.empty())
      section.notes += fmt::format("No fractions: no {} point of this kernel. ", options.reference);
  } else {
    section.reference = resolve_label(kDefaultReference, section);  // empty where the kernel has no floor
  }
  const MediansByShape medians = medians_by_shape(section.rows);
  for (auto& r : section.rows) {
    r.speedup = ratio_to(medians, r, section.baseline);
    r.fraction = ratio_to(medians, r, section.reference);
  }
  section.speedups = speedups_of(section);
  if (!section.speedups.empty()) section.speedup_plot = slug(kernel) + "-speedup";

  if (!section.swept_parameter.empty()) {
    // Parameters swept together with the axis (a zip) are no separate lines: they follow it. Nor are
    // parameters some points lack: points of another tool (an import) or another kernel version,
    // told apart by their implementation, share the lines' axis without them.
    std::vector<std::string> others, companions;
    for (const auto& p : section.parameters) {
      if (p == section.swept_parameter || p == kReplicateParameter || distinct_values(section.rows, p) < 2 ||
          !in_every_point(section.rows, p))
        continue;
      (follows(section.rows, section.swept_parameter, p) ? companions : others).push_back(p);
    }
    for (const auto& mode : section.modes) {
      LinePlot plot = line_plot(section, mode, others, legend_hardware);
      plot.x_companions = companions;
      if (!plot.series.empty()) section.line_plots.push_back(std::move(plot));
    }
  }
  return section;
}

}  // namespace

bool measured(const ViewRow& row) {
  return row.run.status == "passed" && timed(row.run) && std::isfinite(row.run.stats.median_ns) &&
         row.run.stats.median_ns > 0;
}

ReportModel build_model(std::vector<ViewRow> view, const std::vector<LoadedFile>& files, const ModelOptions& options) {
  ReportModel model;
  model.view = std::move(view);
  model.where = options.where;
  model.baseline_option = options.baseline;
  model.reference_option = options.reference;

  const ImplementationFiles holders = implementation_files(model.view);
  const std::set<std::string> ambiguous = ambiguous_stems(files);
  std::map<std::string, std::vector<PointRow>> rows_by_kernel;
  std::set<std::string> implementations;
  for (const ViewRow& row : model.view) {
    rows_by_kernel[row.run.kernel].push_back({&row, label_of(row, holders, ambiguous)});
    implementations.insert(row.run.implementation);
    if (row.run.status != "passed") ++model.failures;
  }
  for (const auto& [option, name] :
       {std::pair{options.baseline, "--baseline"}, std::pair{options.reference, "--reference"}}) {
    if (option.empty() || implementations.count(option)) continue;
    bool is_label = false;
    for (const ViewRow& row : model.view) is_label = is_label || label_of(row, holders, ambiguous) == option;
    if (!is_label)
      throw std::invalid_argument(fmt::format("{} {}: no point has that implementation (the points have: {})", name,
                                              option, fmt::join(implementations, ", ")));
  }
  model.files = file_summaries(files, model.view);
  model.hardware_statement = hardware_statement(model.files);
  const LegendHardware legend_hardware = legend_hardware_of(model.files);
  const RankCalibrations calibrations = rank_calibrations(files);
  for (auto& [kernel, rows] : rows_by_kernel) {
    model.kernels.push_back(section_of(kernel, std::move(rows), options, legend_hardware));
    add_roofline(model.kernels.back(), calibrations);
  }
  model.flagged = flagged_points(model.view);
  model.slow_ranks = slow_rank_notes(files);

  model.environments = cited_documents(files, model.view, true);
  model.protocols = cited_documents(files, model.view, false);
  return model;
}

}  // namespace ks::report_page
