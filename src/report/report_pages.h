#pragma once
// The two pages of `kernelsweep report`: DIR/index.html (plots inline, one self-contained file
// besides nothing) and DIR/report.md (plots linked from DIR/plots/). Both show the same tables.
#include <string>

#include "report/report_model.h"
#include "report/report_plots.h"

namespace ks::report_page {

std::string html_page(const ReportModel& model, const DrawnPlots& plots);
std::string markdown_page(const ReportModel& model, const DrawnPlots& plots);

}  // namespace ks::report_page
