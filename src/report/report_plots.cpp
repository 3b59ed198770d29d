#include "report/report_plots.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/gnuplot.h"
#include "report/report_format.h"

namespace ks::report_page {
namespace {

namespace fs = std::filesystem;

// Wide enough for a legend of implementation and parameter names beside the graph.
constexpr int kWidth = 900, kHeight = 440;

// A string inside a datablock line: double quotes, which gnuplot reads as one column.
std::string data_string(std::string_view text) {
  static constexpr Replacements kSingleQuotes{{'"', "'"}};
  return "\"" + kSingleQuotes(text) + "\"";
}

// A datablock's name, "$" + `text` as a slug: gnuplot's names are letters, digits and underscores.
std::string datablock_name(const std::string& text) {
  std::string name = "$" + slug(text);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

bool powers_of_two(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) {
    const double l = std::log2(v);
    return v > 0 && std::fabs(l - std::round(l)) < 1e-9;
  });
}

// A log axis where the values are positive and span more than a decade and a bit.
std::string log_axis(const std::vector<double>& values, const char* axis) {
  if (values.empty()) return "";
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  if (*low <= 0 || *high / *low < 20) return "";
  return fmt::format("set logscale {}{}\n", axis, powers_of_two(values) ? " 2" : "");
}

void line_plot_script(const LinePlot& plot, std::string& out) {
  begin_plot(plot.name, plot.title + ": median (lines), p20–p80 (bands)", out);
  std::string x_label = plot.x_parameter;
  for (std::size_t i = 0; i < plot.x_companions.size(); ++i)
    x_label += (i == 0 ? " (with " : ", ") + plot.x_companions[i] + (i + 1 == plot.x_companions.size() ? ")" : "");
  out += fmt::format("set xlabel {}\n", gnuplot_string(x_label));
  out += "set ylabel 'time (ms)'\n";
  out += "set key outside right top Left reverse\n";
  out += "set grid xtics ytics lc rgb '#dddddd'\n";
  out += "set style fill transparent solid 0.18 noborder\n";
  std::vector<double> xs, ys;
  for (const auto& s : plot.series)
    for (const auto& p : s.points) {
      xs.push_back(p.x);
      ys.insert(ys.end(), {p.median_ms, p.p20_ms, p.p80_ms});
    }
  if (plot.categories.empty()) {
    out += log_axis(xs, "x");
  } else {
    std::string tics;
    for (std::size_t i = 0; i < plot.categories.size(); ++i)
      tics += fmt::format("{}{} {}", i ? ", " : "", gnuplot_string(plot.categories[i]), i);
    out += fmt::format("set xtics ({})\n", tics);
    out += fmt::format("set xrange [-0.5:{}]\n", gnuplot_number(static_cast<double>(plot.categories.size()) - 0.5));
  }
  out += log_axis(ys, "y");
  std::string plots;
  for (std::size_t i = 0; i < plot.series.size(); ++i) {
    const std::string name = datablock_name(fmt::format("d_{}_{}", plot.name, i));
    out += name + " << EOD\n";
    for (const auto& p : plot.series[i].points)
      out += fmt::format("{} {} {} {}\n", gnuplot_number(p.x), gnuplot_number(p.median_ms), gnuplot_number(p.p20_ms),
                         gnuplot_number(p.p80_ms));
    out += "EOD\n";
    // Colours cycle over gnuplot's 8; dashes tell apart the lines that share one.
    const std::size_t colour = i % 8 + 1, dash = i / 8 + 1;
    plots += fmt::format("{}{} using 1:3:4 with filledcurves lc {} notitle, \\\n", plots.empty() ? "plot " : "     ",
                         name, colour);
    plots += fmt::format("     {} using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc {} dt {} title {}", name, colour, dash,
                         gnuplot_string(plot.series[i].title));
    plots += i + 1 < plot.series.size() ? ", \\\n" : "\n";
  }
  out += plots;
  out += "set output\n";
}

void speedup_plot_script(const KernelSection& section, std::string& out) {
  std::vector<std::string> labels, modes;
  std::vector<double> values;
  for (const auto& s : section.speedups) {
    if (std::find(labels.begin(), labels.end(), s.label) == labels.end()) labels.push_back(s.label);
    if (std::find(modes.begin(), modes.end(), s.mode) == modes.end()) modes.push_back(s.mode);
    values.push_back(s.geometric_mean);
  }
  // Modes in the kernel's order.
  std::stable_sort(modes.begin(), modes.end(), [&](const std::string& a, const std::string& b) {
    return std::find(section.modes.begin(), section.modes.end(), a) <
           std::find(section.modes.begin(), section.modes.end(), b);
  });
  values.push_back(1.0);
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const bool log = *high / *low >= 20;
  begin_plot(section.speedup_plot,
             section.kernel + ": speed-up over " + section.baseline + " (geometric mean over the points both measured)",
             out);
  out += "set ylabel 'speed-up (×)'\n";
  out += "set key outside right top Left reverse\n";
  out += "set grid ytics lc rgb '#dddddd'\n";
  out += "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n";
  out += "set datafile missing '-'\n";
  if (log) {
    out += fmt::format("set logscale y\nset yrange [{}:{}]\n", gnuplot_number(*low / 1.5), gnuplot_number(*high * 1.5));
  } else {
    out += fmt::format("set yrange [0:{}]\n", gnuplot_number(*high * 1.15));
  }
  out += "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#555555'\n";
  const std::string name = datablock_name("d_" + section.speedup_plot);
  out += name + " << EOD\n";
  for (const auto& mode : modes) {
    out += data_string(mode);
    for (const auto& label : labels) {
      const auto found = std::find_if(section.speedups.begin(), section.speedups.end(),
                                      [&](const Speedup& s) { return s.label == label && s.mode == mode; });
      out.append(" ").append(found == section.speedups.end() ? std::string("-")
                                                             : gnuplot_number(found->geometric_mean));
    }
    out += "\n";
  }
  out += "EOD\n";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out += i == 0 ? fmt::format("plot {} using 2:xtic(1) title {}", name, gnuplot_string(labels[i]))
                  : fmt::format(", \\\n     '' using {} title {}", i + 2, gnuplot_string(labels[i]));
  }
  out += "\nset output\n";
}

// Writes the points as a datablock ("intensity TFLOP/s" a line) and returns its name.
std::string roofline_datablock(const std::string& prefix, const std::string& plot, std::size_t index,
                               const std::vector<RooflinePlot::Point>& points, std::string& out) {
  const std::string name = datablock_name(fmt::format("{}_{}_{}", prefix, plot, index));
  out += name + " << EOD\n";
  for (const auto& p : points) out += fmt::format("{} {}\n", gnuplot_number(p.intensity), gnuplot_number(p.tflops));
  out += "EOD\n";
  return name;
}

// Markers by mode (filled circle, square, triangle, diamond, pentagon); a cross for an implausible point.
constexpr int kModeMarkers[] = {7, 5, 9, 13, 15};
constexpr int kImplausibleMarker = 2;

void roofline_plot_script(const RooflinePlot& plot, std::string& out) {
  begin_plot(plot.name, plot.title, out);
  out += "set xlabel 'arithmetic intensity (FLOP/byte)'\nset ylabel 'achieved TFLOP/s'\n";
  out += "set key outside right top Left reverse\n";
  out += "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n";
  out += fmt::format("set logscale xy\nset xrange [{}:{}]\n", gnuplot_number(plot.low), gnuplot_number(plot.high));
  // The roofs' figures as calibrated, unrounded, for whoever reads this script.
  out += fmt::format("# roofs of {}: memory_gbps {}", plot.device, gnuplot_number(plot.roofs.front().memory_gbps));
  for (const auto& roof : plot.roofs) out += fmt::format(", tflops.{} {}", roof.dtype, gnuplot_number(roof.tflops));
  out += "\n";
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < plot.roofs.size(); ++i) {
    const auto& roof = plot.roofs[i];
    const std::string name = roofline_datablock("roof", plot.name, i, roof.points, out);
    const std::string rate = std::isnan(roof.tflops) ? "no rate" : figure(roof.tflops) + " TFLOP/s";
    lines.push_back(
        fmt::format("{} using 1:2 with lines lw 2 lc rgb '#444444' dt {} title {}", name, i + 1,
                    gnuplot_string(fmt::format("roof {}: {} GB/s, {}", roof.dtype, figure(roof.memory_gbps), rate))));
  }
  for (std::size_t i = 0; i < plot.series.size(); ++i) {
    const auto& series = plot.series[i];
    const std::string name = roofline_datablock("points", plot.name, i, series.points, out);
    const int marker =
        series.implausible ? kImplausibleMarker : kModeMarkers[series.mode_index % std::size(kModeMarkers)];
    lines.push_back(fmt::format("{} using 1:2 with points pt {} ps {} lc {} title {}", name, marker,
                                series.implausible ? "1.4" : "0.8", series.label_index % 8 + 1,
                                gnuplot_string(series.title)));
  }
  out += fmt::format("plot {}\nset output\n", fmt::join(lines, ", \\\n     "));
}

std::vector<std::string> plot_names(const ReportModel& model) {
  std::vector<std::string> names;
  for (const auto& section : model.kernels) {
    for (const auto& plot : section.line_plots) names.push_back(plot.name);
    if (!section.speedup_plot.empty()) names.push_back(section.speedup_plot);
    for (const auto& plot : section.rooflines) names.push_back(plot.name);
  }
  return names;
}

// The gnuplot script of every plot (outputs relative to the folder it runs in).
std::string gnuplot_script(const ReportModel& model) {
  std::string out = gnuplot_header(kWidth, kHeight);
  for (const auto& section : model.kernels) {
    for (const auto& plot : section.line_plots) line_plot_script(plot, out);
    if (!section.speedup_plot.empty()) speedup_plot_script(section, out);
    for (const auto& plot : section.rooflines) roofline_plot_script(plot, out);
  }
  return out;
}

}  // namespace

DrawnPlots draw_plots(const ReportModel& model, const fs::path& directory) {
  const std::vector<std::string> names = plot_names(model);
  if (names.empty()) return {};
  return draw_with_gnuplot(directory / "plots", gnuplot_script(model), names);
}

}  // namespace ks::report_page
