#pragma once
// The tables of `kernelsweep report`, as plain cells: the HTML and the markdown page lay out the same
// tables (report_pages.cpp).
#include <string>
#include <vector>

#include "report/report_model.h"

namespace ks::report_page {

struct Table {
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row_ids;      // the point id of each row, where rows are points (HTML data-point)
  std::vector<std::string> row_classes;  // per row: its status, where rows are points
};

// Every point of the kernel: kernel, implementation, mode, parameters, median and p20–p80 (ms),
// TFLOP/s and GB/s where the kernel counts them, sol_pct and flags where a point has them, peak
// memory, status, speed-up, fraction, file.
Table points_table(const KernelSection& section, bool several_files);
// The flagged points (implausible, then no-work): what each is, on which rank, its rates, its flag
// and what the flag means.
Table flagged_table(const ReportModel& model);
// The kernel's points that did not pass, with their messages.
Table failures_table(const KernelSection& section, bool several_files);
// Per implementation and mode: the geometric mean of the speed-ups and how many points it is over.
Table speedups_table(const KernelSection& section);
// The results files: sweep, host, when, points by status, hardware.
Table files_table(const ReportModel& model);
// A document's fields.
Table document_table(const CitedDocument& document);

}  // namespace ks::report_page
