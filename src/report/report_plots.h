#pragma once
// The plots of `kernelsweep report`, drawn by gnuplot: one gnuplot script, DIR/plots/plots.gp, that
// writes DIR/plots/NAME.svg for every plot of the model; gnuplot runs once, as a child process in
// DIR/plots, its output in DIR/plots/gnuplot.log. Without gnuplot the report has no plots and says why.
#include <filesystem>
#include <map>
#include <string>

#include "report/report_model.h"

namespace ks::report_page {

struct DrawnPlots {
  // Each drawn plot's SVG, by name, ready to sit inline in an HTML page (no XML prolog, ids prefixed
  // with the plot's name so that several plots share a page).
  std::map<std::string, std::string> inline_svg;
  std::string why_not;          // empty when gnuplot drew every plot; otherwise one line saying what went wrong
  bool gnuplot_failed = false;  // gnuplot ran and failed (not: gnuplot is not installed)
};

// Writes DIR/plots/plots.gp and runs gnuplot on it.
DrawnPlots draw_plots(const ReportModel& model, const std::filesystem::path& directory);

}  // namespace ks::report_page
