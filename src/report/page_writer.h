#pragma once
// How the report commands write a page: the same headings, paragraphs, tables and figures said in
// HTML (one self-contained page, every text escaped, plots inline) or in GitHub markdown (plots
// linked from plots/).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "report/gnuplot.h"
#include "report/report_format.h"
#include "report/report_tables.h"

namespace ks::report_page {

inline constexpr const char* kPageStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1400px;
       padding: 0 16px; color: #1d2430; background: #fff; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { margin-top: 2em; padding-bottom: 0.2em; border-bottom: 2px solid #d9dee7; }
h3 { margin-top: 1.4em; }
code { background: #f2f4f8; padding: 1px 4px; border-radius: 3px; font-size: 0.92em; }
.hardware { font-weight: 600; background: #eef4ff; border-left: 4px solid #3d6fd8; padding: 8px 12px; }
.hardware.differs { background: #fff5e6; border-left-color: #e08a00; }
.note { color: #7a4b00; background: #fff8e8; padding: 6px 10px; border-left: 4px solid #e0a800; }
.caption { color: #556; font-size: 0.9em; }
nav ul { columns: 3; }
.scroll { overflow-x: auto; max-height: 720px; overflow-y: auto; border: 1px solid #e3e7ee; }
table { border-collapse: collapse; font-size: 0.86em; }
th, td { padding: 3px 9px; border-bottom: 1px solid #eceff4; text-align: left; white-space: nowrap; }
th { background: #f5f7fa; position: sticky; top: 0; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td.message { white-space: normal; min-width: 30em; }
tr:nth-child(even) td { background: #fafbfd; }
tr.failed td, tr.error td, tr.crashed td, tr.timeout td { background: #fff0f0; }
tr.skipped td { color: #778; }
figure { margin: 1em 0; }
figure svg { width: 100%; max-width: 900px; height: auto; display: block; }
footer { margin-top: 3em; color: #889; font-size: 0.85em; }
)";

// How a paragraph stands out: in HTML by its class, in markdown by its markup.
enum class Emphasis { none, hardware, hardware_differs, note, caption };

// One of the two pages as it is written: the same things said in HTML (every text escaped) or in
// markdown.
class Page {
 public:
  Page(bool html, const DrawnPlots& plots) : html_(html), plots_(plots) {}
  std::string& text() { return out_; }

  // The page's start, with its title as its first heading.
  void begin(const std::string& title) {
    if (!html_) {
      out_ += fmt::format("# {}\n\n", title);
      return;
    }
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out_ += fmt::format("<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n", html_escape(title),
                        kPageStyle);
  }
  void end(const std::string& footer) {
    out_ += html_ ? fmt::format("<footer>{}</footer>\n</body>\n</html>\n", html_escape(footer)) : footer + "\n";
  }
  // A part of the page under its heading; `id` is its anchor in HTML.
  void open_section(const std::string& id, const std::string& heading) {
    out_ += html_ ? fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", id, html_escape(heading))
                  : fmt::format("## {}\n\n", heading);
  }
  void close_section() {
    if (html_) out_ += "</section>\n";
  }
  void subheading(const std::string& text) {
    out_ += html_ ? fmt::format("<h3>{}</h3>\n", html_escape(text)) : fmt::format("### {}\n\n", text);
  }
  void paragraph(const std::string& text, Emphasis emphasis = Emphasis::none) {
    if (html_) {
      static constexpr const char* kClasses[] = {"", " class=\"hardware\"", " class=\"hardware differs\"",
                                                 " class=\"note\"", " class=\"caption\""};
      out_ += fmt::format("<p{}>{}</p>\n", kClasses[static_cast<std::size_t>(emphasis)], html_escape(text));
    } else {
      const bool bold = emphasis == Emphasis::hardware || emphasis == Emphasis::hardware_differs;
      out_ += (bold ? "**" + text + "**" : emphasis == Emphasis::note ? "> " + text : text) + "\n\n";
    }
  }
  // A paragraph with a piece of code in it: an option, a digest.
  void paragraph_with_code(const std::string& before, const std::string& code, const std::string& after) {
    out_ +=
        html_ ? fmt::format("<p>{}<code>{}</code>{}</p>\n", html_escape(before), html_escape(code), html_escape(after))
              : fmt::format("{}`{}`{}\n\n", before, code, after);
  }
  void list(const std::vector<std::string>& items) {
    if (html_) out_ += "<ul>\n";
    for (const auto& item : items) out_ += html_ ? fmt::format("<li>{}</li>\n", html_escape(item)) : "- " + item + "\n";
    out_ += html_ ? "</ul>\n" : "\n";
  }
  // The HTML page's table of contents, to the sections' anchors: (id, title) each.
  void contents(const std::vector<std::pair<std::string, std::string>>& entries) {
    if (!html_) return;
    out_ += "<nav><h2>Contents</h2><ul>\n";
    for (const auto& [id, title] : entries)
      out_ += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", id, html_escape(title));
    out_ += "</ul></nav>\n";
  }
  // In HTML, the column headed `message_column` wraps its lines.
  void table(const Table& table, const char* message_column = "") {
    if (html_) out_ += html_table(table, message_column);
    else out_ += markdown_table(table);
  }
  void figure(const std::string& name, const std::string& title, const std::string& caption) {
    const bool drawn = plots_.inline_svg.count(name) > 0;
    const std::string why = plots_.why_not.empty() ? "" : " (" + plots_.why_not + ")";
    if (html_) {
      out_ += "<figure>\n";
      if (drawn) out_ += plots_.inline_svg.at(name);
      else out_ += fmt::format("<p class=\"note\">{}: not drawn{}</p>", html_escape(title), html_escape(why));
      if (!caption.empty())
        out_ += fmt::format("<figcaption class=\"caption\">{}</figcaption>\n", html_escape(caption));
      out_ += "</figure>\n";
      return;
    }
    if (drawn) out_ += fmt::format("![{}](plots/{}.svg)\n\n", markdown_cell(title), name);
    else out_ += fmt::format("{}: not drawn{}.\n\n", title, why);
    if (!caption.empty()) out_ += fmt::format("*{}.*\n\n", caption);
  }

 private:
  static std::string html_table(const Table& table, const char* message_column) {
    std::string out = "<div class=\"scroll\"><table>\n<thead><tr>";
    for (std::size_t c = 0; c < table.headers.size(); ++c)
      out += fmt::format("<th{}>{}</th>", table.numeric[c] ? " class=\"n\"" : "", html_escape(table.headers[c]));
    out += "</tr></thead>\n<tbody>\n";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      out += "<tr";
      if (r < table.row_classes.size()) out += fmt::format(" class=\"{}\"", slug(table.row_classes[r]));
      if (r < table.row_ids.size()) out += fmt::format(" data-point=\"{}\"", html_escape(table.row_ids[r]));
      out += ">";
      for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
        const bool message = table.headers[c] == message_column;
        out += table.numeric[c] ? "<td class=\"n\">" : message ? "<td class=\"message\">" : "<td>";
        out += html_escape(table.rows[r][c]);
        out += "</td>";
      }
      out += "</tr>\n";
    }
    return out + "</tbody></table></div>\n";
  }

  static std::string markdown_table(const Table& table) {
    std::string out = "|";
    for (const auto& h : table.headers) out.append(" ").append(markdown_cell(h)).append(" |");
    out += "\n|";
    for (std::size_t c = 0; c < table.headers.size(); ++c) out += table.numeric[c] ? "---:|" : "---|";
    out += "\n";
    for (const auto& row : table.rows) {
      out += "|";
      for (const auto& cell : row) out.append(" ").append(markdown_cell(cell)).append(" |");
      out += "\n";
    }
    return out + "\n";
  }

  bool html_;
  const DrawnPlots& plots_;
  std::string out_;
};

// The folder the pages go to, made if missing; "" when it is there, else why not (one line).
std::string make_output_folder(const std::filesystem::path& directory);
// A page written whole; throws std::runtime_error where it cannot be.
void write_page(const std::filesystem::path& path, const std::string& text);

}  // namespace ks::report_page
