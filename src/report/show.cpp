// `kernelsweep show FILE.h5...`: the current view of results files (view/view.h) as a table, a
// GitHub markdown table, CSV or JSON (docs/show.md). Every format prints the same rows and columns:
// the table and markdown round figures for reading, CSV and JSON keep every digit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/printable.h"
#include "report/commands.h"
#include "report/report_format.h"
#include "report/text_table.h"
#include "run/run.h"
#include "view/filter.h"
#include "view/view.h"

namespace ks {
namespace {

using Json = nlohmann::json;

// The width of a message in the table and markdown; CSV and JSON keep it whole.
constexpr std::size_t kMessageWidth = 100;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// --- the columns -----------------------------------------------------------------------------------

// A column of the output: its value in a row (null where there is none) for CSV and JSON, and its
// text for the table and markdown.
struct Column {
  std::string name;
  std::function<Json(const ViewRow&)> value;
  std::function<std::string(const ViewRow&)> text;  // empty: the value as CSV writes it
  bool numeric = false;  // right-aligned in the table (a column without `text` finds out from its values)
};

// A figure with 4 significant digits and no exponent (12.35, 0.001235, 12346): short, and still
// comparable down a right-aligned column.
std::string four_digits(double value) {
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(3 - magnitude, 0, 12);
  return fmt::format("{:.{}f}", value, decimals);
}

// Bytes in decimal units, 4 significant digits: 812 B, 33.55 MB, 1.250 GB.
std::string readable_bytes(double bytes) {
  static const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  std::size_t unit = 0;
  while (bytes >= 1000 && unit + 1 < std::size(units)) {
    bytes /= 1000;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{} {}", four_digits(bytes), units[unit]);
}

// CSV's text of a value: strings as they are, numbers with every digit (the shortest text that reads
// back as the same double), null as nothing.
std::string plain_text(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get_ref<const std::string&>();
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

Column text_column(std::string name, std::function<std::string(const ViewRow&)> get) {
  return {std::move(name), [get](const ViewRow& row) { return Json(get(row)); }, get, false};
}

// A figure in four digits where it is finite (the repetitions' median of medians, the samples'
// clocks), else empty.
Column finite_column(std::string name, const std::function<double(const ViewRow&)>& figure) {
  const auto value = [figure](const ViewRow& row) {
    const double x = figure(row);
    return std::isfinite(x) ? Json(x) : Json();
  };
  return {std::move(name), value,
          [value](const ViewRow& row) {
            const Json x = value(row);
            return x.is_null() ? std::string() : four_digits(x.get<double>());
          },
          true};
}

// A figure of a timed point (NaN for one that was not timed: its column is empty there).
double if_timed(const ViewRow& row, double figure) { return timed(row.run) ? figure : kNaN; }

// A time in ms from a figure in ns.
Column time_column(std::string name, double Statistics::*figure) {
  return finite_column(std::move(name),
                       [figure](const ViewRow& row) { return if_timed(row, row.run.stats.*figure / 1e6); });
}

// A rate (TFLOP/s, GB/s) where the point does that work (flops or bytes above 0).
Column rate_column(std::string name, double RunRecord::*rate, double RunRecord::*work) {
  return finite_column(std::move(name),
                       [=](const ViewRow& row) { return row.run.*work > 0 ? if_timed(row, row.run.*rate) : kNaN; });
}

Column count_column(std::string name, std::int64_t RunRecord::*count) {
  const auto value = [count](const ViewRow& row) { return timed(row.run) ? Json(row.run.*count) : Json(); };
  return {std::move(name), value, {}};
}

// A value as CSV writes it, right-aligned in the table whatever it holds.
Column plain_column(std::string name, const std::function<Json(const ViewRow&)>& value) {
  return {std::move(name), value, [value](const ViewRow& row) { return plain_text(value(row)); }, true};
}

// A figure of the GPU's state at the end of the timed repetitions, where it was read.
Column gpu_state_column(std::string name, double GpuState::*figure) {
  return plain_column(std::move(name), [figure](const ViewRow& row) {
    const double x = row.run.gpu_end.*figure;
    return std::isnan(x) ? Json() : Json(x);
  });
}

// What a cold measurement recorded, where the point was measured so (else empty).
Column noise_column(std::string name, const std::function<Json(const RunRecord&)>& figure) {
  return plain_column(std::move(name),
                      [figure](const ViewRow& row) { return noise_was_recorded(row.run) ? figure(row.run) : Json(); });
}

// The run's message where it `passed` or not (a failure's message, a check's note), else "".
Column message_column(std::string name, bool passed) {
  return {std::move(name),
          [passed](const ViewRow& row) {
            return (row.run.status == "passed") == passed ? Json(row.run.message) : Json("");
          },
          [passed](const ViewRow& row) {
            return (row.run.status == "passed") == passed ? first_line_cut(row.run.message, kMessageWidth)
                                                          : std::string();
          }};
}

Json finite_or_null(double x) { return std::isfinite(x) ? Json(x) : Json(); }

// The columns that are not parameters, in the order --columns lists them in its error.
std::vector<Column> fixed_columns() {
  return {
      text_column("file", [](const ViewRow& row) { return row.file; }),
      text_column("kernel", [](const ViewRow& row) { return row.run.kernel; }),
      text_column("implementation", [](const ViewRow& row) { return row.run.implementation; }),
      text_column("mode", [](const ViewRow& row) { return row.run.mode; }),
      text_column("status", [](const ViewRow& row) { return row.run.status; }),
      time_column("median_ms", &Statistics::median_ns),
      time_column("p20_ms", &Statistics::p20_ns),
      time_column("p80_ms", &Statistics::p80_ns),
      rate_column("tflops", &RunRecord::tflops, &RunRecord::flops),
      rate_column("gbps", &RunRecord::gbps, &RunRecord::bytes),
      {"peak_bytes",
       [](const ViewRow& row) { return row.run.device_peak_bytes > 0 ? Json(row.run.device_peak_bytes) : Json(); },
       [](const ViewRow& row) {
         return row.run.device_peak_bytes > 0 ? readable_bytes(static_cast<double>(row.run.device_peak_bytes)) : "";
       },
       true},
      count_column("n_repeat", &RunRecord::n_repeat),
      message_column("message", false),
      // Not printed unless --columns names them.
      message_column("check", true),
      text_column("point", [](const ViewRow& row) { return row.run.point_id; }),
      time_column("mean_ms", &Statistics::mean_ns),
      time_column("min_ms", &Statistics::min_ns),
      time_column("max_ms", &Statistics::max_ns),
      time_column("stddev_ms", &Statistics::stddev_ns),
      finite_column("flops", [](const ViewRow& row) { return if_timed(row, row.run.flops); }),
      finite_column("bytes", [](const ViewRow& row) { return if_timed(row, row.run.bytes); }),
      count_column("n_warmup", &RunRecord::n_warmup),
      {"rank", [](const ViewRow& row) { return Json(row.run.rank); }, {}},
      text_column("host", [](const ViewRow& row) { return row.run.host; }),
      text_column("gpu", [](const ViewRow& row) { return row.run.gpu_uuid; }),
      text_column("started_at", [](const ViewRow& row) { return row.run.started_at; }),
      text_column("ended_at", [](const ViewRow& row) { return row.run.ended_at; }),
      {"rows", [](const ViewRow& row) { return Json(row.rows_of_point); }, {}},
      text_column("slowed_by", [](const ViewRow& row) { return slowed_by(row.run); }),
      gpu_state_column("sm_clock_mhz", &GpuState::sm_clock_mhz),
      gpu_state_column("memory_clock_mhz", &GpuState::memory_clock_mhz),
      gpu_state_column("power_w", &GpuState::power_w),
      gpu_state_column("temperature_c", &GpuState::temperature_c),
      {"repetitions", [](const ViewRow& row) { return Json(row.repetitions_passed); }, {}},
      finite_column("median_of_medians_ms", [](const ViewRow& row) { return row.median_of_medians_ns / 1e6; }),
      finite_column("repetition_spread", [](const ViewRow& row) { return row.repetition_spread; }),
      noise_column("noise", [](const RunRecord& run) { return finite_or_null(run.noise.noise); }),
      noise_column("noise_goal_met", [](const RunRecord& run) { return Json(run.noise.goal_met == 1 ? "yes" : "no"); }),
      noise_column("samples_dropped", [](const RunRecord& run) { return Json(run.noise.samples_dropped); }),
      finite_column("sample_sm_clock_min_mhz", [](const ViewRow& row) { return row.run.sample_sm_clock_min_mhz; }),
      finite_column("sample_sm_clock_median_mhz",
                    [](const ViewRow& row) { return row.run.sample_sm_clock_median_mhz; }),
      // Collectives (docs/collectives.md): nccl-tests' busbw, and the elements the check found wrong.
      finite_column("bus_gbps", [](const ViewRow& row) { return row.run.bus_gbps; }),
      {"wrong_elements",
       [](const ViewRow& row) { return row.run.wrong_elements >= 0 ? Json(row.run.wrong_elements) : Json(); },
       {}},
      // The speed of light (docs/speed-of-light.md): sol_pct and flags are shown by default where a row has them.
      finite_column("sol_pct", [](const ViewRow& row) { return row.run.sol_pct; }),
      text_column("flags", [](const ViewRow& row) { return row.run.flags; }),
      finite_column("bandwidth_pct", [](const ViewRow& row) { return row.run.bandwidth_pct; }),
      finite_column("compute_pct", [](const ViewRow& row) { return row.run.compute_pct; }),
      // Energy (docs/speed-of-light.md, "Energy"): joules_per_call and gflops_per_joule are shown by
      // default where a row has them; the window they came from on request.
      finite_column("joules_per_call", [](const ViewRow& row) { return row.run.joules_per_call; }),
      finite_column("gflops_per_joule", [](const ViewRow& row) { return row.run.gflops_per_joule; }),
      finite_column("energy_window_s", [](const ViewRow& row) { return row.run.energy_window_s; }),
  };
}

// A parameter's column; named param.NAME when NAME is taken by a fixed column.
Column parameter_column(const std::string& parameter, const std::set<std::string>& fixed_names) {
  const std::string name = fixed_names.contains(parameter) ? "param." + parameter : parameter;
  return {name,
          [parameter](const ViewRow& row) {
            const auto it = row.params.find(parameter);
            return it == row.params.end() ? Json() : *it;
          },
          {}};
}

// The rows printed, in order: they stay where the view holds them.
using Rows = std::vector<const ViewRow*>;

// Parameter names, each once: kernels in name order, each kernel's parameters in name order (a
// kernel's rows may differ in their keys: a parameter added between two files).
std::vector<std::string> parameter_names(const Rows& rows) {
  std::map<std::string, std::set<std::string>> by_kernel;
  for (const ViewRow* row : rows) {
    std::set<std::string>& keys = by_kernel[row->run.kernel];
    if (keys.size() == row->params.size()) continue;  // the usual case: this kernel's keys are known already
    for (const auto& item : row->params.items()) keys.insert(item.key());
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& [kernel, keys] : by_kernel)
    for (const std::string& key : keys)
      if (seen.insert(key).second) names.push_back(key);
  return names;
}

struct ColumnSet {
  std::vector<Column> known;  // every column --columns may name
  std::vector<std::string> parameters;
};

// The columns of every row of the files, whatever --where keeps: --columns may name any of them.
ColumnSet known_columns(const std::vector<std::vector<ViewRow>>& views) {
  Rows every;
  for (const auto& view : views)
    for (const ViewRow& row : view) every.push_back(&row);
  ColumnSet set;
  set.known = fixed_columns();
  std::set<std::string> fixed_names;
  for (const Column& column : set.known) fixed_names.insert(column.name);
  for (const std::string& parameter : parameter_names(every)) {
    set.known.push_back(parameter_column(parameter, fixed_names));
    set.parameters.push_back(set.known.back().name);
  }
  return set;
}

// The default columns: the file (when there are several), what the point is, then how it went.
std::vector<std::string> default_column_names(const ColumnSet& set, const Rows& shown, bool several_files) {
  std::vector<std::string> names;
  if (several_files) names.push_back("file");
  names.insert(names.end(), {"kernel", "implementation", "mode"});
  const std::vector<std::string> shown_parameters = parameter_names(shown);
  // The parameters of the rows shown, as named among the known columns.
  for (const std::string& name : set.parameters) {
    const std::string parameter = name.starts_with("param.") ? name.substr(6) : name;
    if (std::find(shown_parameters.begin(), shown_parameters.end(), parameter) != shown_parameters.end())
      names.push_back(name);
  }
  names.insert(names.end(),
               {"status", "median_ms", "p20_ms", "p80_ms", "tflops", "gbps", "peak_bytes", "n_repeat", "message"});
  // How close each point came to its device's speed of light, beside its rates, where a row was held
  // against its rank's calibration.
  if (std::any_of(shown.begin(), shown.end(), [](const ViewRow* row) { return speed_of_light_was_found(row->run); })) {
    const auto after_rates = std::find(names.begin(), names.end(), "gbps") + 1;
    names.insert(after_rates, {"sol_pct", "flags"});
  }
  // What each call cost in energy, after the rates and their speed of light, where a row has it.
  if (std::any_of(shown.begin(), shown.end(), [](const ViewRow* row) { return energy_was_measured(row->run); })) {
    const bool has_flags = std::find(names.begin(), names.end(), "flags") != names.end();
    const auto after_rates = std::find(names.begin(), names.end(), has_flags ? "flags" : "gbps") + 1;
    names.insert(after_rates, {"joules_per_call", "gflops_per_joule"});
  }
  return names;
}

// --- the rows --------------------------------------------------------------------------------------

// Kernel, implementation, mode, then the parameters by value, in the order of `parameters`.
void sort_rows(Rows& rows, const std::vector<std::string>& parameters) {
  // Each row's parameter values, looked up once rather than at every comparison, in one array.
  const std::size_t width = parameters.size();
  std::vector<const Json*> values;
  values.reserve(rows.size() * width);
  for (const ViewRow* row : rows)
    for (const std::string& name : parameters) {
      const auto it = row->params.find(name);
      values.push_back(it == row->params.end() ? nullptr : &*it);
    }
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const RunRecord &x = rows[a]->run, &y = rows[b]->run;
    if (int c = x.kernel.compare(y.kernel)) return c < 0;
    if (int c = x.implementation.compare(y.implementation)) return c < 0;
    if (int c = x.mode.compare(y.mode)) return c < 0;
    for (std::size_t i = 0; i < width; ++i)
      if (int c = compare_parameter_values(values[a * width + i], values[b * width + i])) return c < 0;
    return false;
  });
  Rows sorted;
  sorted.reserve(rows.size());
  for (std::size_t i : order) sorted.push_back(rows[i]);
  rows = std::move(sorted);
}

// Bad input: the reason, one line.
struct BadInput {
  std::string line;
};

// Each file's current view, the files in the order given. Throws BadInput naming the file.
std::vector<std::vector<ViewRow>> read_views(const std::vector<std::string>& files) {
  std::vector<std::vector<ViewRow>> views;
  for (const std::string& path : files) {
    try {
      views.push_back(current_view(ResultsFile::open_read_only(path), path));
    } catch (const std::exception& e) {
      std::string why = e.what();
      std::replace(why.begin(), why.end(), '\n', ' ');
      throw BadInput{fmt::format("{}: not a results file that can be read: {}", path, why)};
    }
  }
  return views;
}

// --- the formats -----------------------------------------------------------------------------------

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

struct TextGrid {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;  // [row][column]
  std::vector<bool> right_aligned;              // numeric columns
};

TextGrid text_grid(const std::vector<const Column*>& columns, const Rows& rows, bool markdown) {
  TextGrid grid;
  for (const Column* column : columns) {
    grid.header.push_back(column->name);
    grid.right_aligned.push_back(column->text ? column->numeric : true);
  }
  grid.cells.reserve(rows.size());
  for (const ViewRow* row : rows) {
    std::vector<std::string> line;
    line.reserve(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      std::string text;
      if (columns[c]->text) {
        text = columns[c]->text(*row);
      } else {
        const Json value = columns[c]->value(*row);
        text = plain_text(value);
        if (!value.is_null() && !value.is_number()) grid.right_aligned[c] = false;
      }
      line.push_back(markdown ? report_page::pipes_escaped(text) : std::move(text));
    }
    grid.cells.push_back(std::move(line));
  }
  return grid;
}

std::vector<std::size_t> column_widths(const TextGrid& grid) {
  std::vector<std::size_t> widths;
  for (const std::string& name : grid.header) widths.push_back(std::max<std::size_t>(display_width(name), 3));
  for (const auto& line : grid.cells)
    for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], display_width(line[c]));
  return widths;
}

std::string padded(const std::string& text, std::size_t width, bool right) {
  const std::string fill(width - std::min(width, display_width(text)), ' ');
  return right ? fill + text : text + fill;
}

// Columns two spaces apart, numbers right-aligned, a rule under the header; no trailing spaces.
void print_table(const TextGrid& grid, std::string& out) {
  const auto widths = column_widths(grid);
  const auto print_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += "  ";
      line += padded(cells[c], widths[c], grid.right_aligned[c]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line;
    out += '\n';
  };
  print_line(grid.header);
  std::vector<std::string> rule;
  for (std::size_t width : widths) rule.emplace_back(width, '-');
  print_line(rule);
  for (const auto& line : grid.cells) print_line(line);
}

void print_markdown(const TextGrid& grid, std::string& out) {
  const auto widths = column_widths(grid);
  const auto print_line = [&](const std::vector<std::string>& cells) {
    out += '|';
    for (std::size_t c = 0; c < cells.size(); ++c) {
      out += ' ';
      out += padded(cells[c], widths[c], grid.right_aligned[c]);
      out += " |";
    }
    out += '\n';
  };
  print_line(grid.header);
  out += '|';
  for (std::size_t c = 0; c < widths.size(); ++c) {
    out += ' ';
    out.append(widths[c] - 1, '-');  // widths are at least 3
    out += grid.right_aligned[c] ? ": |" : "- |";
  }
  out += '\n';
  for (const auto& line : grid.cells) print_line(line);
}

void print_csv(const std::vector<const Column*>& columns, const Rows& rows, std::string& out) {
  const auto print_line = [&](const auto& text_of) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += ',';
      append_csv_field(text_of(*columns[c]), out);
    }
    out += "\r\n";
  };
  print_line([](const Column& column) { return column.name; });
  for (const ViewRow* row : rows) print_line([&](const Column& column) { return plain_text(column.value(*row)); });
}

void print_json(const std::vector<const Column*>& columns, const Rows& rows, std::string& out) {
  out += '[';
  for (std::size_t r = 0; r < rows.size(); ++r) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const Column* column : columns) object[column->name] = column->value(*rows[r]);
    out += r == 0 ? "\n  " : ",\n  ";
    out += object.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  out += rows.empty() ? "]\n" : "\n]\n";
}

// --- the command -----------------------------------------------------------------------------------

std::vector<const Column*> chosen_columns(const ColumnSet& set, const std::vector<std::string>& names) {
  std::vector<const Column*> chosen;
  for (const std::string& name : names) {
    if (name.empty()) continue;
    const auto column =
        std::find_if(set.known.begin(), set.known.end(), [&](const Column& c) { return c.name == name; });
    if (column == set.known.end()) {
      std::vector<std::string> known;
      for (const Column& c : set.known) known.push_back(c.name);
      throw BadInput{fmt::format("--columns: unknown column '{}' (known: {})", name, fmt::join(known, ", "))};
    }
    chosen.push_back(&*column);
  }
  if (chosen.empty()) throw BadInput{"--columns: no column named"};
  return chosen;
}

std::string render(const ShowRequest& request) {
  const RowFilter filter = [&] {
    try {
      return RowFilter::parse(request.where);
    } catch (const FilterError& e) { throw BadInput{e.what()}; }
  }();
  const std::vector<std::vector<ViewRow>> views = read_views(request.files);
  const ColumnSet set = known_columns(views);

  Rows shown;  // each file's rows that --where keeps, sorted; the files in the order given
  for (const auto& view : views) {
    Rows kept;
    for (const ViewRow& row : view)
      if (filter.matches(row)) kept.push_back(&row);
    sort_rows(kept, parameter_names(kept));
    shown.insert(shown.end(), kept.begin(), kept.end());
  }
  const auto columns = chosen_columns(
      set, request.columns.empty() ? default_column_names(set, shown, request.files.size() > 1) : request.columns);

  std::string out;
  if (request.format == "csv") {
    print_csv(columns, shown, out);
  } else if (request.format == "json") {
    print_json(columns, shown, out);
  } else if (request.format == "md") {
    print_markdown(text_grid(columns, shown, true), out);
  } else if (request.format == "table") {
    print_table(text_grid(columns, shown, false), out);
  } else {
    throw BadInput{fmt::format("--format: '{}' is not one of table, md, csv, json", request.format)};
  }
  return out;
}

}  // namespace

int show_results(const ShowRequest& request) {
  std::string out;
  try {
    out = render(request);
  } catch (const BadInput& bad) {
    std::cerr << "kernelsweep show: " << printable(bad.line) << "\n";
    return kExitBadInput;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace ks
