#pragma once
// What `kernelsweep report` shows, worked out once from the current view: per kernel its points in
// table order, each point's speed-up over the baseline and fraction of the reference, the series of
// its plots and its roofline, the flagged points and slow ranks, and the files, environments and
// protocols the points come from. The plots and the HTML and markdown pages (report_plots.h) only
// lay this out.
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "calibration/fleet_health.h"
#include "store/results_file.h"
#include "view/view.h"

namespace ks::report_page {

inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// One results file of the report.
struct FileSummary {
  std::string path;  // as given
  RunInfo info;
  std::vector<std::string> hardware;            // what its environments ran on: "NVIDIA H200 (sm_90, SXM5-141GB)"
  std::map<std::string, std::size_t> statuses;  // of its points in the report
  std::size_t points = 0;
};

// An /environments or /protocols document cited by the report's points.
struct CitedDocument {
  std::string digest;
  std::string title;                                        // metadata.title, or the kind when it has none
  std::vector<std::pair<std::string, std::string>> fields;  // spec flattened: "hardware.product" -> "NVIDIA H200"
  std::vector<std::string> files;                           // the files that hold it
  std::size_t points = 0;                                   // the report's points that cite it
};

// One row of a kernel's table.
struct PointRow {
  const ViewRow* row = nullptr;
  std::string label;        // the implementation, with its file when several files hold it
  double speedup = kNone;   // the baseline's median / this median, at the same mode and parameters
  double fraction = kNone;  // the reference's median / this median
};

// One line of a plot: an implementation (and a combination of the other varying parameters).
struct Series {
  struct Point {
    double x = 0, median_ms = 0, p20_ms = 0, p80_ms = 0;
  };
  std::string title;
  std::vector<Point> points;  // by x
};

// Median against the swept parameter, for one kernel and mode.
struct LinePlot {
  std::string name;  // file name without .svg
  std::string title;
  std::string x_parameter;
  std::vector<std::string> x_companions;  // parameters swept together with it (a zip), named on the axis
  std::vector<std::string> categories;    // a parameter that is not a number: its values, at x = 0, 1, ...
  std::vector<Series> series;
  std::string note;  // what was left out or merged, for the caption
};

// The geometric mean of an implementation's speed-ups over the baseline, per mode.
struct Speedup {
  std::string label, mode;
  double geometric_mean = kNone;
  std::size_t points = 0;
};

// Achieved rate against arithmetic intensity, with the roofs of the device the points ran on
// (docs/speed-of-light.md): a point on a roof is at its device's speed of light.
struct RooflinePlot {
  struct Point {
    double intensity = 0;  // FLOPs per byte of one call
    double tflops = 0;     // achieved, from the median
  };
  // The points of one implementation (and mode and dtype, where those vary), implausible ones apart.
  struct Series {
    std::string title;
    std::size_t label_index = 0;  // which implementation: its colour
    std::size_t mode_index = 0;   // which mode: its marker
    bool implausible = false;
    std::vector<Point> points;
  };
  // min(memory bandwidth × intensity, the dtype's rate), from low to high intensity.
  struct Roof {
    std::string dtype;
    double memory_gbps = kNone;
    double tflops = kNone;  // NaN: the calibration has no rate for the dtype (the memory roof alone)
    std::vector<Point> points;
  };
  std::string name;  // file name without .svg
  std::string title;
  std::string device;        // whose roofs are drawn
  double low = 0, high = 0;  // the intensity axis
  std::vector<Series> series;
  std::vector<Roof> roofs;
  std::string caption;
};

struct KernelSection {
  std::string kernel;
  std::vector<std::string> parameters;  // table columns, in order: those whose value differs between points
  std::vector<std::pair<std::string, std::string>> fixed;  // the others: one value in every point, as text
  std::vector<std::string> modes;                          // in the order they first appear
  std::vector<std::string> labels;                         // implementation labels, sorted
  std::string baseline;                                    // a label, or empty
  std::string reference;                                   // a label, or empty
  std::string notes;                                       // why there is no baseline or reference, where so
  bool has_flops = false, has_bytes = false;
  std::vector<PointRow> rows;           // by mode, parameters, implementation
  std::vector<LinePlot> line_plots;     // one per mode that has timed points
  std::string swept_parameter;          // the line plots' x axis; empty when no parameter varies
  std::vector<Speedup> speedups;        // by label, then mode
  std::string speedup_plot;             // file name without .svg; empty when there is nothing to draw
  std::vector<RooflinePlot> rooflines;  // none or one
  std::string no_roofline;              // why there is none, in one sentence
};

// A point whose figures are not to be taken as they stand (docs/speed-of-light.md's flags).
struct FlaggedPoint {
  const ViewRow* row = nullptr;
  std::string flag;     // "implausible" or "no-work"
  std::string meaning;  // what the flag says about the point, in one line
};

// A rank measurably slower than the ranks with the same device (calibration/fleet_health.h).
struct SlowRankNote {
  std::string file;
  SlowRank rank;
  std::size_t points = 0;  // of the file, whatever --where keeps
};

struct ReportModel {
  std::vector<ViewRow> view;  // the points after --where; everything below points into it
  std::vector<FileSummary> files;
  std::string hardware_statement;  // the files' hardware, and whether it differs
  std::vector<KernelSection> kernels;
  std::vector<FlaggedPoint> flagged;     // implausible first, then no-work
  std::vector<SlowRankNote> slow_ranks;  // by file, then rank
  std::vector<CitedDocument> environments, protocols;
  std::string where;
  std::string baseline_option, reference_option;
  std::size_t failures = 0;  // points that did not pass
};

struct ModelOptions {
  std::string baseline;   // implementation or label; empty: cpu where present, else the first alphabetically
  std::string reference;  // implementation or label; empty: none
  std::string where;
};

// The input of build_model: each file opened, and the view of all of them.
struct LoadedFile {
  std::string path;
  RunInfo info;
  std::vector<DigestedDocument> environments, protocols;
  std::vector<RankInfo> ranks;  // /ranks, with each rank's calibration where it has one
  // The file's points (before --where) by the rank that measured them.
  std::map<std::int32_t, std::size_t> points_by_rank;
};

// True when the point passed and was timed: it has figures to show, plot and compare.
bool measured(const ViewRow& row);

// Throws std::invalid_argument when --baseline or --reference names an implementation that no
// point has (bad input).
ReportModel build_model(std::vector<ViewRow> view, const std::vector<LoadedFile>& files, const ModelOptions& options);

// At most `most` of `points`, evenly spaced, the first and last kept: a plot's series stays bounded
// however large the file.
template <typename Point> std::vector<Point> evenly_thinned(std::vector<Point> points, std::size_t most) {
  if (points.size() <= most) return points;
  std::vector<Point> out;
  const double step = static_cast<double>(points.size() - 1) / static_cast<double>(most - 1);
  for (std::size_t i = 0; i < most; ++i)
    out.push_back(points[static_cast<std::size_t>(std::llround(static_cast<double>(i) * step))]);
  return out;
}

// --- speed-ups and fractions (report_speedups.cpp) ---------------------------------------------------
// Each point's median against another implementation's at the same shape (its mode and parameters),
// and each implementation's geometric-mean speed-up over the baseline.

// Each point's medians by label, keyed by its mode and parameters.
using MediansByShape = std::unordered_map<std::string, std::map<std::string, double>>;

MediansByShape medians_by_shape(const std::vector<PointRow>& rows);

// The median of `label` at r's shape over r's median; kNone where either is missing or not a basis
// for a ratio (not measured, or flagged implausible).
double ratio_to(const MediansByShape& medians, const PointRow& r, const std::string& label);

// The label an option names: itself, or the first label of that implementation. Empty when none.
std::string resolve_label(const std::string& option, const KernelSection& section);

// The CPU implementation where the kernel has one, else the first label.
std::string default_baseline(const KernelSection& section);

// Each label's geometric-mean speed-up over the section's baseline, per mode.
std::vector<Speedup> speedups_of(const KernelSection& section);

}  // namespace ks::report_page
