#pragma once
// gnuplot as the report commands use it: the text of a script (its terminal, each plot's start,
// strings and numbers as gnuplot reads them), and the script run once, as a child process in the
// folder the plots go to, its output in FOLDER/gnuplot.log. Without gnuplot a report has no plots
// and says why.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ks::report_page {

struct DrawnPlots {
  // Each drawn plot's SVG, by name, ready to sit inline in an HTML page (no XML prolog, ids prefixed
  // with the plot's name so that several plots share a page).
  std::map<std::string, std::string> inline_svg;
  std::string why_not;          // empty when gnuplot drew every plot; otherwise one line saying what went wrong
  bool gnuplot_failed = false;  // gnuplot ran and failed (not: gnuplot is not installed)
};

// A gnuplot string literal: single quotes take everything literally but the quote itself.
std::string gnuplot_string(std::string_view text);
// A number as a script writes it: 9 significant digits.
std::string gnuplot_number(double value);
// A script's start: what it is, UTF-8, and an SVG terminal of `width` × `height`.
std::string gnuplot_header(int width, int height);
// A plot's start: gnuplot's settings reset, the file it writes (NAME.svg) and its title.
void begin_plot(const std::string& name, const std::string& title, std::string& out);

// Writes `script` to FOLDER/plots.gp (made if missing; the SVGs of `names` an earlier report left
// are removed first) and runs gnuplot on it; reads back FOLDER/NAME.svg of every name drawn.
DrawnPlots draw_with_gnuplot(const std::filesystem::path& folder, const std::string& script,
                             const std::vector<std::string>& names);

}  // namespace ks::report_page
