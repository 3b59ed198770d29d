#include "report/report_speed_of_light.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "calibration/speed_of_light.h"
#include "measure/do_bench.h"
#include "report/report_format.h"

namespace ks::report_page {

RankCalibrations rank_calibrations(const std::vector<LoadedFile>& files) {
  RankCalibrations out;
  for (const LoadedFile& file : files)
    for (RankCalibration& calibration : ks::rank_calibrations(file.ranks))
      out.insert_or_assign({file.path, calibration.rank}, std::move(calibration));
  return out;
}

const DeviceCalibration* device_of(const ViewRow& row, const RankCalibrations& calibrations) {
  const auto found = calibrations.find({row.file, row.run.rank});
  if (found == calibrations.end()) return nullptr;
  if (row.run.gpu_uuid.empty()) return &found->second.cpu;
  return found->second.gpu ? &*found->second.gpu : nullptr;
}

std::string flag_meaning(const std::string& flag) {
  if (flag == "implausible")
    return "a rate above 1.5 times the device's calibrated or datasheet figure: the work model counts what the code "
           "does not do, or the timer missed the work; left out of every speed-up and fraction";
  if (flag == "no-work") return "declares no FLOPs and no bytes: there is no rate to hold against the device";
  if (flag == "drift")
    return "measured after its rank's sentinel found the device more than 5% below its calibration: it may be slow "
           "for the device's sake, not the kernel's";
  return "";
}

std::vector<FlaggedPoint> flagged_points(const std::vector<ViewRow>& view) {
  std::vector<FlaggedPoint> out;
  // in-cache is not listed: it says why a small point's bandwidth may exceed memory's, and puts none
  // of its figures in doubt (its FLOPs are still held to the device's rate). The points tables show
  // it in their flags column.
  for (const char* flag : {"implausible", "drift", "no-work"})
    for (const ViewRow& row : view)
      if (has_flag(row.run.flags, flag)) out.push_back({&row, flag, flag_meaning(flag)});
  return out;
}

std::vector<SlowRankNote> slow_rank_notes(const std::vector<LoadedFile>& files) {
  std::vector<SlowRankNote> out;
  for (const LoadedFile& file : files) {
    // Within a file only: the ranks of two runs are different processes, whatever their numbers.
    for (SlowRank& slow : slow_ranks(ks::rank_calibrations(file.ranks))) {
      const auto points = file.points_by_rank.find(slow.rank);
      out.push_back({file.path, std::move(slow), points == file.points_by_rank.end() ? 0 : points->second});
    }
  }
  return out;
}

// --- rooflines ---------------------------------------------------------------------------------------

namespace {

// A series keeps at most this many points, evenly spaced by intensity, however large the file.
constexpr std::size_t kMaxRooflinePoints = 500;

// A dtype the point does not say counts fp32, as sol_pct takes it.
std::string dtype_of(const ViewRow& row) {
  const auto found = row.params.find("dtype");
  return found != row.params.end() && found->is_string() ? found->get<std::string>() : "fp32";
}

bool positive_figure(double value) { return std::isfinite(value) && value > 0; }

// A point with an intensity and a rate: measured, and counting both FLOPs and bytes.
bool drawable(const ViewRow& row) {
  const RunRecord& run = row.run;
  return measured(row) && positive_figure(run.flops) && positive_figure(run.bytes) && positive_figure(run.tflops);
}

std::string device_key(const DeviceCalibration& device) { return device.backend + ": " + device.device; }

std::string why_no_roofline(const KernelSection& section) {
  if (!section.has_flops && !section.has_bytes) return "No roofline: its points declare no work (no FLOPs, no bytes).";
  if (!section.has_flops)
    return "No roofline: its points count bytes but no FLOPs, so they have no arithmetic intensity.";
  if (!section.has_bytes)
    return "No roofline: its points count FLOPs but no bytes, so they have no arithmetic intensity.";
  return "No roofline: none of its points that count both FLOPs and bytes was measured.";
}

// The device most of the points ran on, and the calibrations of its ranks (one per file and rank).
struct Roofed {
  std::string key;
  std::vector<const DeviceCalibration*> calibrations;
  std::size_t points = 0;
};

Roofed most_used_device(const std::vector<const PointRow*>& drawn, const RankCalibrations& calibrations) {
  std::map<std::string, std::size_t> points;
  std::map<std::string, std::map<std::pair<std::string, std::int32_t>, const DeviceCalibration*>> ranks;
  for (const PointRow* r : drawn) {
    const DeviceCalibration* device = device_of(*r->row, calibrations);
    if (!device) continue;
    ++points[device_key(*device)];
    ranks[device_key(*device)][{r->row->file, r->row->run.rank}] = device;
  }
  Roofed out;
  for (const auto& [key, count] : points)
    if (count > out.points) out = {key, {}, count};
  if (out.key.empty()) return out;
  for (const auto& [rank, device] : ranks[out.key]) out.calibrations.push_back(device);
  return out;
}

// A figure of the device: the median over its ranks of those that have it (NaN where none has).
template <typename Figure> double median_figure(const Roofed& device, Figure figure_of) {
  std::vector<double> values;
  for (const DeviceCalibration* calibration : device.calibrations)
    if (const double value = figure_of(*calibration); positive_figure(value)) values.push_back(value);
  return median_of(std::move(values));
}

std::vector<RooflinePlot::Roof> roofs_of(const Roofed& device, const std::set<std::string>& dtypes) {
  const double memory = median_figure(device, [](const DeviceCalibration& d) { return d.measured.memory_gbps; });
  std::vector<RooflinePlot::Roof> roofs;
  for (const std::string& dtype : dtypes) {
    const double rate = median_figure(
        device, [&](const DeviceCalibration& d) { return roof_tflops(d.measured, dtype, d.backend).value_or(kNone); });
    roofs.push_back({dtype, memory, rate, {}});
  }
  return roofs;
}

std::size_t index_in(const std::vector<std::string>& list, const std::string& item) {
  return static_cast<std::size_t>(std::find(list.begin(), list.end(), item) - list.begin());
}

// One series per implementation, mode (where several) and dtype (where several); implausible points
// apart, so that they are drawn with a marker of their own.
std::vector<RooflinePlot::Series> series_of(const KernelSection& section, const std::vector<const PointRow*>& drawn,
                                            bool several_dtypes, bool& thinned_any) {
  using Key = std::tuple<std::string, std::string, std::string, bool>;
  std::map<Key, RooflinePlot::Series> by_key;
  for (const PointRow* r : drawn) {
    const RunRecord& run = r->row->run;
    const bool implausible = has_flag(run.flags, "implausible");
    auto [at, added] = by_key.try_emplace(Key{r->label, run.mode, dtype_of(*r->row), implausible});
    if (added) {
      std::string title = r->label;
      if (section.modes.size() > 1) title += " · " + run.mode;
      if (several_dtypes) title += " · " + dtype_of(*r->row);
      at->second = {implausible ? title + " (implausible)" : title,
                    index_in(section.labels, r->label),
                    index_in(section.modes, run.mode),
                    implausible,
                    {}};
    }
    at->second.points.push_back({run.flops / run.bytes, run.tflops});
  }
  std::vector<RooflinePlot::Series> out;
  for (auto& [key, series] : by_key) {
    thinned_any = thinned_any || series.points.size() > kMaxRooflinePoints;
    std::sort(series.points.begin(), series.points.end(),
              [](const auto& a, const auto& b) { return a.intensity < b.intensity; });
    series.points = evenly_thinned(std::move(series.points), kMaxRooflinePoints);
    out.push_back(std::move(series));
  }
  return out;
}

std::string caption_of(const RooflinePlot& plot, const Roofed& device, std::size_t drawn, std::size_t left_out,
                       bool thinned_any) {
  std::vector<std::string> rates;
  for (const auto& roof : plot.roofs)
    rates.push_back(std::isnan(roof.tflops)
                        ? fmt::format("no {} rate in its calibration (the memory roof alone)", roof.dtype)
                        : fmt::format("{} TFLOP/s in {}", figure(roof.tflops), roof.dtype));
  std::string caption = fmt::format(
      "Achieved TFLOP/s against FLOPs per byte, a marker per point. Roofs: {}'s calibrated memory bandwidth "
      "({} GB/s) and its rate ({}){}; a point on a roof runs at the speed of light.",
      plot.device, figure(plot.roofs.front().memory_gbps), fmt::join(rates, "; "),
      device.calibrations.size() > 1 ? fmt::format(", the median of its {} ranks", device.calibrations.size()) : "");
  if (device.points < drawn)
    caption += fmt::format(
        " {} of the {} points ran there; the other {} ran on another device or a rank not calibrated, "
        "whose roofs are not drawn.",
        device.points, drawn, drawn - device.points);
  if (std::any_of(plot.series.begin(), plot.series.end(), [](const auto& s) { return s.implausible; }))
    caption += " Crosses: points flagged implausible (rates beyond the device), drawn as measured.";
  if (left_out > 0)
    caption += fmt::format(" {} measured points count no FLOPs or no bytes and are not drawn.", left_out);
  if (thinned_any)
    caption += fmt::format(" Series of more than {} points are thinned evenly by intensity.", kMaxRooflinePoints);
  caption.pop_back();  // the pages end a caption themselves, as they do the line plots' notes
  return caption;
}

}  // namespace

std::vector<RooflinePlot::Point> roof_points(double memory_gbps, double tflops, double low, double high) {
  const auto roof = [&](double intensity) {
    const double memory = memory_gbps * intensity / 1e3;  // GB/s × FLOP/byte = GFLOP/s
    return std::isnan(tflops) ? memory : std::min(memory, tflops);
  };
  std::vector<RooflinePlot::Point> out{{low, roof(low)}};
  const double ridge = tflops * 1e3 / memory_gbps;
  if (ridge > low && ridge < high) out.push_back({ridge, tflops});
  out.push_back({high, roof(high)});
  return out;
}

std::pair<double, double> intensity_axis(const std::vector<double>& intensities) {
  const auto [low, high] = std::minmax_element(intensities.begin(), intensities.end());
  return {std::pow(10.0, std::floor(std::log10(*low / 2))), std::pow(10.0, std::ceil(std::log10(*high * 2)))};
}

void add_roofline(KernelSection& section, const RankCalibrations& calibrations) {
  std::vector<const PointRow*> drawn;
  std::size_t measured_points = 0;
  for (const PointRow& r : section.rows) {
    measured_points += measured(*r.row);
    if (!drawable(*r.row)) continue;
    drawn.push_back(&r);
  }
  if (drawn.empty()) {
    section.no_roofline = why_no_roofline(section);
    return;
  }
  const Roofed device = most_used_device(drawn, calibrations);
  if (device.key.empty()) {
    section.no_roofline =
        "No roofline: the ranks of its points have no calibration (a run with --calibrate off, or a "
        "file written before calibrations), so there are no roofs to draw.";
    return;
  }
  std::set<std::string> dtypes;
  for (const PointRow* r : drawn)
    if (const DeviceCalibration* d = device_of(*r->row, calibrations); d && device_key(*d) == device.key)
      dtypes.insert(dtype_of(*r->row));
  RooflinePlot plot;
  plot.roofs = roofs_of(device, dtypes);
  plot.device = device.calibrations.front()->device.empty() ? device.key : device.calibrations.front()->device;
  if (!positive_figure(plot.roofs.front().memory_gbps)) {
    section.no_roofline = fmt::format("No roofline: the calibration of {} has no memory bandwidth.", plot.device);
    return;
  }
  plot.name = slug(section.kernel) + "-roofline";
  plot.title = fmt::format("{}: roofline on {}", section.kernel, plot.device);
  bool thinned_any = false;
  plot.series = series_of(section, drawn, dtypes.size() > 1, thinned_any);

  std::vector<double> intensities;
  for (const auto& s : plot.series)
    for (const auto& p : s.points) intensities.push_back(p.intensity);
  for (const auto& roof : plot.roofs)
    if (positive_figure(roof.tflops)) intensities.push_back(roof.tflops * 1e3 / roof.memory_gbps);  // the ridge
  std::tie(plot.low, plot.high) = intensity_axis(intensities);
  for (auto& roof : plot.roofs) roof.points = roof_points(roof.memory_gbps, roof.tflops, plot.low, plot.high);
  plot.caption = caption_of(plot, device, drawn.size(), measured_points - drawn.size(), thinned_any);
  section.rooflines.push_back(std::move(plot));
}

}  // namespace ks::report_page
