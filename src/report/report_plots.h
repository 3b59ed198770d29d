#pragma once
// The plots of `kernelsweep report`, drawn by gnuplot: one gnuplot script, DIR/plots/plots.gp, that
// writes DIR/plots/NAME.svg for every plot of the model; gnuplot runs once, as a child process in
// DIR/plots, its output in DIR/plots/gnuplot.log. Without gnuplot the report has no plots and says why.
// And the two pages that show them (report_pages.cpp).
#include <filesystem>
#include <string>

#include "report/gnuplot.h"
#include "report/report_model.h"

namespace ks::report_page {

// Writes DIR/plots/plots.gp and runs gnuplot on it.
DrawnPlots draw_plots(const ReportModel& model, const std::filesystem::path& directory);

// The two pages of `kernelsweep report`: DIR/index.html (plots inline, one self-contained file
// besides nothing) and DIR/report.md (plots linked from DIR/plots/). Both show the same tables.
std::string html_page(const ReportModel& model, const DrawnPlots& plots);
std::string markdown_page(const ReportModel& model, const DrawnPlots& plots);

}  // namespace ks::report_page
