// `kernelsweep report FILE.h5... -o DIR`: DIR/index.html and DIR/report.md, with the flagged points
// and slow ranks, tables, speed-ups, fractions of a reference, failures, the documents cited, and
// plots drawn by gnuplot (DIR/plots/), rooflines among them.
// The model (report_model.h) decides what is shown; the tables, plots and pages lay it out.
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "report/commands.h"
#include "report/history_report.h"
#include "report/page_writer.h"
#include "report/report_model.h"
#include "report/report_plots.h"
#include "run/run.h"
#include "view/filter.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using report_page::LoadedFile;

// Bad input: one line on stderr, exit code 2.
int refuse(const std::string& what) {
  std::fprintf(stderr, "kernelsweep report: %s\n", what.c_str());
  return kExitBadInput;
}

struct Loaded {
  std::vector<LoadedFile> files;
  std::vector<ViewRow> view;
};

// Opens every file and reads its view; throws std::runtime_error naming the file at fault.
Loaded load(const std::vector<std::string>& paths) {
  Loaded loaded;
  std::set<std::string> seen;
  for (const std::string& path : paths) {
    if (!seen.insert(fs::weakly_canonical(path).string()).second) throw std::runtime_error(path + ": given twice");
    if (!fs::exists(path)) throw std::runtime_error(path + ": no such file");
    try {
      const ResultsFile file = ResultsFile::open_read_only(path);
      loaded.files.push_back(
          {path, file.read_info(), file.read_environments(), file.read_protocols(), file.read_ranks(), {}});
      std::vector<ViewRow> part = current_view(file, path);
      for (const ViewRow& row : part) ++loaded.files.back().points_by_rank[row.run.rank];
      loaded.view.insert(loaded.view.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    } catch (const ResultsFileError& e) {
      throw std::runtime_error(e.what());  // already names the file
    } catch (const std::exception& e) { throw std::runtime_error(fmt::format("{}: {}", path, e.what())); }
  }
  return loaded;
}

}  // namespace

int write_report(const ReportRequest& request) {
  if (request.history) return write_history_report(request);
  RowFilter filter;
  try {
    filter = RowFilter::parse(request.where);
  } catch (const FilterError& e) {
    return refuse(e.what());  // it names --where
  }
  Loaded loaded;
  try {
    loaded = load(request.files);
  } catch (const std::runtime_error& e) { return refuse(e.what()); }
  const fs::path directory = request.output_directory;
  if (const std::string why = report_page::make_output_folder(directory); !why.empty()) return refuse(why);

  report_page::ReportModel model;
  try {
    model = report_page::build_model(filter.apply(std::move(loaded.view)), loaded.files,
                                     {request.baseline, request.reference, request.where});
  } catch (const std::invalid_argument& e) { return refuse(e.what()); }
  if (model.view.empty())
    std::fprintf(stderr, "kernelsweep report: no point matches --where %s\n", request.where.c_str());

  const report_page::DrawnPlots plots = report_page::draw_plots(model, directory);
  report_page::write_page(directory / "index.html", report_page::html_page(model, plots));
  report_page::write_page(directory / "report.md", report_page::markdown_page(model, plots));

  std::printf("report: %s and %s (%zu points, %zu plots)\n", (directory / "index.html").c_str(),
              (directory / "report.md").c_str(), model.view.size(), plots.inline_svg.size());
  if (plots.why_not.empty()) return kExitOk;
  std::fprintf(stderr, "kernelsweep report: %s\n", plots.why_not.c_str());
  // Without gnuplot the report is complete but for its plots; a gnuplot that fails is a fault.
  return plots.gnuplot_failed ? kExitFailure : kExitOk;
}

}  // namespace ks
