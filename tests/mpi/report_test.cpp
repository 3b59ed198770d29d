// `kernelsweep report` on the results of real small sweeps (under mpirun, on the CPU): the pages name
// every point and every failure, the plots are well-formed SVG with a line per implementation, a
// headless browser renders the page, several files state their hardware, and without gnuplot the
// tables are still written. Needs gnuplot and chromium (scripts/install-deps.sh installs them).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "store/results_file.h"
#include "support/cli_runner.h"
#include "view/view.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// test_sleep at several run_ms, on cpu and gpu_only (skipped without a GPU); a point that throws and
// one whose check fails; the CPU gemm at three sizes.
const std::string kMeasuredSweep = quick_sweep("measured", R"(  - kernel: test_sleep
    implementations: [cpu, gpu_only]
    modes: [forward, backward]
    grid:
      run_ms: [0.05, 0.2, 1, 3]
  - kernel: test_crash
    grid:
      action: [throw, fail_check]
  - kernel: gemm
    implementations: [cpu]
    grid:
      M: [16, 64, 256]
      N: [32]
      K: [32]
      dtype: [fp32]
)",
                                               /*max_repeat=*/20);

// Runs the sweep in a folder of the test's own (ctest runs each test as its own process).
fs::path measured_file(const std::string& name) {
  const fs::path dir = fresh_directory("report_" + name);
  write_file(dir / "measured.yaml", kMeasuredSweep);
  const auto run = run_shell(
      mpirun_test_cli(2, fmt::format("run {} --output-dir {}", (dir / "measured.yaml").string(), dir.string())));
  if (run.exit_code != 1)
    throw std::runtime_error("the sweep should end with points that did not pass:\n" + run.output);
  return dir / "measured.h5";
}

CommandResult report(const std::string& args) { return run_shell(fmt::format("{} report {}", KS_CLI, args)); }

std::string parameter_text(const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::string html_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (c == '\'') out += "&#39;";
    else out += c;
  }
  return out;
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

// --- reading the pages back ------------------------------------------------------------------------

using Row = std::map<std::string, std::string>;  // header -> cell

std::vector<std::string> split_markdown_row(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += "\\|";
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(cell.size() >= 2 ? cell.substr(1, cell.size() - 2) : cell);
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// Every row of every markdown table.
std::vector<Row> markdown_rows(const std::string& page) {
  std::vector<Row> rows;
  std::vector<std::string> headers;
  std::stringstream in(page);
  bool separator_next = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) != 0) {
      headers.clear();
      continue;
    }
    const auto cells = split_markdown_row(line);
    if (headers.empty()) {
      headers = cells;
      separator_next = true;
    } else if (separator_next) {
      separator_next = false;
    } else {
      Row row;
      for (std::size_t c = 0; c < cells.size() && c < headers.size(); ++c) row[headers[c]] = cells[c];
      rows.push_back(row);
    }
  }
  return rows;
}

std::vector<std::string> html_cells(const std::string& html, const char* tag) {
  std::vector<std::string> cells;
  const std::regex cell(fmt::format(R"re(<{0}(?:\s[^>]*)?>(.*?)</{0}>)re", tag));  // not <thead>
  for (auto it = std::sregex_iterator(html.begin(), html.end(), cell); it != std::sregex_iterator(); ++it)
    cells.push_back((*it)[1]);
  return cells;
}

// The first HTML table row of the point, by the headers of its table.
Row html_row(const std::string& page, const std::string& point_id) {
  const auto at = page.find(fmt::format("data-point=\"{}\"", point_id));
  if (at == std::string::npos) return {};
  const auto head = page.rfind("<thead>", at);
  const auto headers = html_cells(page.substr(head, page.find("</thead>", head) - head), "th");
  const auto start = page.rfind("<tr", at);
  const auto cells = html_cells(page.substr(start, page.find("</tr>", at) - start), "td");
  Row row;
  for (std::size_t c = 0; c < cells.size() && c < headers.size(); ++c) row[headers[c]] = cells[c];
  return row;
}

// Per kernel, each parameter's values over the points ("" where a point lacks it).
using ValuesByParameter = std::map<std::string, std::set<std::string>>;
std::map<std::string, ValuesByParameter> parameter_values(const std::vector<ViewRow>& points) {
  std::map<std::string, ValuesByParameter> out;
  for (const ViewRow& point : points)
    for (const auto& [key, value] : point.params.items()) out[point.run.kernel][key];
  for (const ViewRow& point : points)
    for (auto& [key, values] : out[point.run.kernel])
      values.insert(point.params.contains(key) ? parameter_text(point.params.at(key)) : "");
  return out;
}

// The point's cells: its implementation, mode and each parameter that differs between the kernel's
// points, as the pages show them (the others are said once, above the table).
Row expected_cells(const ViewRow& point, const std::string& label, const ValuesByParameter& values) {
  Row cells{{"kernel", point.run.kernel}, {"implementation", label}, {"mode", point.run.mode}};
  for (const auto& [key, value] : point.params.items())
    if (values.at(key).size() > 1) cells[key] = parameter_text(value);
  return cells;
}

bool has_cells(const Row& row, const Row& expected) {
  for (const auto& [header, value] : expected) {
    const auto found = row.find(header);
    if (found == row.end() || found->second != value) return false;
  }
  return true;
}

std::string describe(const Row& row) {
  std::string out;
  for (const auto& [k, v] : row) out += k + "=" + v + " ";
  return out;
}

// --- XML and pictures -------------------------------------------------------------------------------

// Parses the file with python3's own XML parser: "ok" or the parser's complaint.
std::string xml_check(const fs::path& file) {
  const auto r = run_shell(fmt::format(
      "/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1]); print(\"ok\")' {}",
      file.string()));
  return r.exit_code == 0 ? "ok" : r.output;
}

// Distinct colours among a PNG's first rows (8-bit RGB or RGBA), decoded by python3 and zlib alone.
constexpr const char* kColours = R"(import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
rows_wanted = int(sys.argv[2])
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
at, idat = 8, b''
while at < len(data):
    length, kind = struct.unpack('>I4s', data[at:at + 8])
    body = data[at + 8:at + 8 + length]
    if kind == b'IHDR':
        width, height, depth, colour_type, _, _, interlace = struct.unpack('>IIBBBBB', body)
    elif kind == b'IDAT':
        idat += body
    at += 12 + length
assert depth == 8 and colour_type in (2, 6) and interlace == 0, 'unexpected PNG form'
step = 3 if colour_type == 2 else 4
stride = width * step
rows = min(rows_wanted, height)
raw = zlib.decompressobj().decompress(idat, (stride + 1) * rows)
previous = bytearray(stride)
colours = set()
for y in range(rows):
    kind = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if kind == 1:
        for i in range(step, stride): line[i] = (line[i] + line[i - step]) & 255
    elif kind == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, previous))
    elif kind == 3:
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            line[i] = (line[i] + ((left + previous[i]) >> 1)) & 255
    elif kind == 4:
        for i in range(stride):
            a = line[i - step] if i >= step else 0
            b = previous[i]
            c = previous[i - step] if i >= step else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, step):
        colours.add(bytes(line[x:x + 3]))
    previous = line
print(len(colours))
)";

// --- the file of another machine ------------------------------------------------------------------------

// A copy of the measured file's passed test_sleep cpu points, twice as fast, as if measured on an H200
// (an imported file, say): same kernel, mode and parameters, another environment. The GPU's state is
// recorded with each, its power cap reached at the end of the backward points.
fs::path twice_as_fast_elsewhere(const fs::path& measured) {
  const fs::path path = measured.parent_path() / "imported.h5";
  fs::remove(path);
  const ResultsFile source = ResultsFile::open_read_only(measured);
  RunInfo info = source.read_info();
  info.sweep_name = "imported";
  ResultsFile file = ResultsFile::create(path, info);
  const std::string environment = "sha256:" + std::string(64, 'e');
  file.put_environment(environment,
                       R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment",)"
                       R"("metadata":{"title":"imported · NVIDIA H200"},"spec":{"hardware":{"architecture":"sm_90",)"
                       R"("formFactor":"SXM5-141GB","product":"NVIDIA H200","vendor":"nvidia"}}})");
  for (const auto& protocol : source.read_protocols()) file.put_protocol(protocol.digest, protocol.json);
  std::vector<StoredRun> batch;
  for (StoredRun run : source.read_runs()) {
    if (run.kernel != "test_sleep" || run.implementation != "cpu" || run.status != "passed") continue;
    for (double* figure : {&run.stats.median_ns, &run.stats.p20_ns, &run.stats.p80_ns, &run.stats.mean_ns,
                           &run.stats.min_ns, &run.stats.max_ns, &run.stats.stddev_ns})
      *figure /= 2;
    run.tflops *= 2;
    run.gbps *= 2;
    run.samples_ns = source.read_samples(run.samples_offset, run.samples_count);
    for (double& s : run.samples_ns) s /= 2;
    run.cited.environment_digest = environment;
    const bool capped = run.mode == "backward";
    run.gpu_start = {1980, 3201, 310.5, 41, throttle::kGpuIdle};
    run.gpu_end = {capped ? 1590.0 : 1980.0, 3201, capped ? 699.0 : 520.0, 55, capped ? throttle::kSwPowerCap : 0};
    batch.push_back(run);
  }
  file.append(batch);
  file.finish("2026-12-01T00:00:00.000Z");
  return path;
}

// --- tests --------------------------------------------------------------------------------------------------

TEST(Report, PagesNameEveryPointAndEveryFailureMessage) {
  const fs::path results = measured_file("points");
  const fs::path out = results.parent_path() / "report";
  const auto r = report(fmt::format("{} -o {}", results.string(), out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_text(out / "index.html"), markdown = read_text(out / "report.md");
  const auto md_rows = markdown_rows(markdown);

  const auto points = current_view({results.string()});
  ASSERT_EQ(points.size(), 4u * 2 * 2 + 2 + 3);
  const auto values_by_kernel = parameter_values(points);
  std::size_t failures = 0;
  for (const ViewRow& point : points) {
    SCOPED_TRACE(point.run.kernel + " " + point.run.implementation + " " + point.run.params_json);
    const ValuesByParameter& values = values_by_kernel.at(point.run.kernel);
    const Row expected = expected_cells(point, point.run.implementation, values);
    for (const auto& [key, value] : values)
      if (value.size() == 1) {
        const std::string said = key + "=" + *value.begin();
        EXPECT_NE(html.find(said), std::string::npos) << said << " is said once in index.html";
        EXPECT_NE(markdown.find(said), std::string::npos) << said << " is said once in report.md";
      }
    Row shown = html_row(html, point.run.point_id);
    EXPECT_TRUE(has_cells(shown, expected)) << "index.html: " << describe(shown);
    EXPECT_EQ(shown["status"], point.run.status);
    EXPECT_TRUE(std::any_of(md_rows.begin(), md_rows.end(), [&](const Row& row) { return has_cells(row, expected); }))
        << "report.md has no row " << describe(expected);
    if (point.run.status == "passed") continue;
    ++failures;
    ASSERT_FALSE(point.run.message.empty());
    EXPECT_NE(html.find(html_escape(point.run.message)), std::string::npos) << point.run.message;
    EXPECT_NE(markdown.find(markdown_cell(point.run.message)), std::string::npos) << point.run.message;
  }
  EXPECT_GE(failures, 2u);  // the throw and the failed check, and gpu_only where there is no GPU
  EXPECT_NE(html.find("thrown on purpose"), std::string::npos);
  // The environments and protocols the points cite, by digest.
  for (const ViewRow& point : points) {
    EXPECT_NE(html.find(point.run.cited.environment_digest), std::string::npos);
    EXPECT_NE(markdown.find(point.run.cited.protocol_digest), std::string::npos);
  }
  EXPECT_NE(html.find("Measured on "), std::string::npos);
}

TEST(Report, PlotsAreWellFormedSvgWithALinePerImplementation) {
  const fs::path results = measured_file("plots");
  const fs::path out = results.parent_path() / "report";
  const auto r = report(fmt::format("{} -o {}", results.string(), out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // kernel-mode -> the implementations with measured points: the lines its plot must have.
  std::map<std::string, std::set<std::string>> expected;
  for (const ViewRow& point : current_view({results.string()}))
    if (point.run.status == "passed")
      expected[point.run.kernel + "-" + point.run.mode].insert(point.run.implementation);
  ASSERT_TRUE(expected.count("test_sleep-forward"));
  ASSERT_TRUE(expected.count("gemm-forward"));

  const std::string html = read_text(out / "index.html"), markdown = read_text(out / "report.md");
  std::size_t svgs = 0;
  for (const auto& entry : fs::directory_iterator(out / "plots")) {
    if (entry.path().extension() != ".svg") continue;
    ++svgs;
    EXPECT_EQ(xml_check(entry.path()), "ok") << entry.path();
    EXPECT_NE(markdown.find("(plots/" + entry.path().filename().string() + ")"), std::string::npos) << entry.path();
  }
  for (const auto& [plot, implementations] : expected) {
    const fs::path svg = out / "plots" / (plot + ".svg");
    ASSERT_TRUE(fs::exists(svg)) << svg;
    const std::string text = read_text(svg);
    for (const auto& implementation : implementations)
      EXPECT_NE(text.find(">" + implementation + "</text>"), std::string::npos)
          << plot << ": no line titled " << implementation;
  }
  // Every plot sits inline in the page.
  std::size_t inline_svgs = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++inline_svgs;
  EXPECT_EQ(inline_svgs, svgs);
  EXPECT_GE(svgs, expected.size());
}

TEST(Report, AHeadlessBrowserRendersThePage) {
  ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "no /usr/bin/chromium: scripts/install-deps.sh installs it";
  const fs::path results = measured_file("browser");
  const fs::path out = results.parent_path() / "report";
  ASSERT_EQ(report(fmt::format("{} -o {}", results.string(), out.string())).exit_code, 0);
  const fs::path png = out / "screenshot.png";
  const fs::path profile = results.parent_path() / "chromium-profile";
  fs::create_directories(profile);
  const auto shot = run_shell(
      fmt::format("timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                  "--disable-background-networking --disable-component-update --disable-sync --user-data-dir={} "
                  "--screenshot={} --window-size=1280,2000 file://{}",
                  profile.string(), png.string(), fs::absolute(out / "index.html").string()));
  ASSERT_TRUE(fs::exists(png)) << shot.output;
  write_file(out / "colours.py", kColours);
  const auto colours =
      run_shell(fmt::format("/usr/bin/python3 {} {} 2000", (out / "colours.py").string(), png.string()));
  ASSERT_EQ(colours.exit_code, 0) << colours.output;
  // Text, tables and plots: many colours (a blank page has one).
  EXPECT_GT(std::stoi(colours.output), 16) << "the screenshot looks blank";
}

TEST(Report, SeveralFilesStateTheirHardwareSpeedUpsAndFractions) {
  const fs::path measured = measured_file("several");
  const fs::path imported = twice_as_fast_elsewhere(measured);
  const fs::path out = measured.parent_path() / "report";
  const auto r = report(fmt::format("{} {} -o {} --baseline 'cpu (measured)' --reference 'cpu (imported)'",
                                    measured.string(), imported.string(), out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_text(out / "index.html"), markdown = read_text(out / "report.md");
  // At the top: the files differ in hardware, and what each ran on.
  const auto top = markdown.substr(0, markdown.find("\n## "));
  EXPECT_NE(top.find("different hardware"), std::string::npos) << top;
  EXPECT_NE(top.find("NVIDIA H200"), std::string::npos) << top;
  EXPECT_NE(top.find(measured.string()), std::string::npos) << top;
  EXPECT_NE(html.find("different hardware"), std::string::npos);

  // The same implementation in two files: one line each, told apart by the file.
  std::size_t compared = 0;
  for (const Row& row : markdown_rows(markdown)) {
    // Rows of the points tables only (the flagged points' table has no status).
    if (row.count("kernel") == 0 || row.count("status") == 0 || row.at("kernel") != "test_sleep" ||
        row.at("status") != "passed")
      continue;
    if (row.at("implementation") == "cpu (imported)") {
      EXPECT_EQ(row.at("speed-up over cpu (measured)"), "2.000×") << describe(row);
      EXPECT_EQ(row.at("fraction of cpu (imported)"), "1.000×") << describe(row);
      EXPECT_EQ(row.at("GPU slowed by"), row.at("mode") == "backward" ? "sw_power_cap" : "") << describe(row);
      ++compared;
    } else if (row.at("implementation") == "cpu (measured)") {
      EXPECT_EQ(row.at("speed-up over cpu (measured)"), "1.000×") << describe(row);
      EXPECT_EQ(row.at("fraction of cpu (imported)"), "0.5000×") << describe(row);
      EXPECT_EQ(row.at("GPU slowed by"), "") << describe(row);  // a CPU point: no GPU state
      ++compared;
    }
  }
  EXPECT_EQ(compared, 4u * 2 * 2);
  const std::string bars = read_text(out / "plots" / "test_sleep-speedup.svg");
  EXPECT_EQ(xml_check(out / "plots" / "test_sleep-speedup.svg"), "ok");
  EXPECT_NE(bars.find(">cpu (imported)</text>"), std::string::npos);
  // The lines name the hardware of their file, the files' differing.
  const std::string lines = read_text(out / "plots" / "test_sleep-forward.svg");
  EXPECT_NE(lines.find(">cpu (imported) · NVIDIA H200</text>"), std::string::npos) << lines;
  EXPECT_NE(lines.find(">cpu (measured) · "), std::string::npos) << lines;

  // show prints the GPU's state at the end of each point, and what slowed it.
  const auto shown =
      run_shell(fmt::format("{} show {} --columns mode,slowed_by,sm_clock_mhz,power_w,temperature_c --format csv",
                            KS_CLI, imported.string()));
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  std::istringstream csv(shown.output);
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.substr(0, line.find_last_not_of("\r") + 1), "mode,slowed_by,sm_clock_mhz,power_w,temperature_c");
  std::size_t shown_rows = 0;
  while (std::getline(csv, line)) {
    if (line.empty() || line == "\r") continue;
    const bool capped = line.substr(0, line.find(',')) == "backward";
    const std::string rest = line.substr(line.find(',') + 1);
    EXPECT_EQ(rest.substr(0, rest.find_last_not_of("\r") + 1), capped ? "sw_power_cap,1590,699,55" : ",1980,520,55")
        << line;
    ++shown_rows;
  }
  EXPECT_EQ(shown_rows, 4u * 2);
}

TEST(Report, WithoutGnuplotTheTablesAreWrittenAndThePageSaysWhy) {
  const fs::path results = measured_file("no_gnuplot");
  const fs::path out = results.parent_path() / "report";
  const auto r = run_shell(fmt::format("PATH=/nonexistent {} report {} -o {}", KS_CLI, results.string(), out.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gnuplot"), std::string::npos) << r.output;
  const std::string html = read_text(out / "index.html");
  EXPECT_NE(html.find("gnuplot is not installed"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  for (const ViewRow& point : current_view({results.string()}))
    EXPECT_NE(html.find(point.run.point_id), std::string::npos);
  EXPECT_NE(read_text(out / "report.md").find("gnuplot is not installed"), std::string::npos);
}

TEST(Report, WhereKeepsTheMatchingPoints) {
  const fs::path results = measured_file("where");
  const fs::path out = results.parent_path() / "report";
  const auto r = report(fmt::format("{} -o {} --where 'kernel=gemm,M>=64'", results.string(), out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_text(out / "index.html");
  std::size_t kept = 0;
  for (const ViewRow& point : current_view({results.string()})) {
    const bool match = point.run.kernel == "gemm" && point.params.at("M").get<int>() >= 64;
    EXPECT_EQ(html.find(point.run.point_id) != std::string::npos, match) << point.run.params_json;
    kept += match;
  }
  EXPECT_EQ(kept, 2u);
}

TEST(Report, BadInputIsOneLineAndExitCode2) {
  const fs::path dir = fresh_directory("report_bad_input");
  write_file(dir / "not-results.h5", "plain text\n");
  const auto not_results = report(fmt::format("{} -o {}", (dir / "not-results.h5").string(), (dir / "out").string()));
  EXPECT_EQ(not_results.exit_code, 2) << not_results.output;
  EXPECT_NE(not_results.output.find("not-results.h5"), std::string::npos) << not_results.output;
  EXPECT_EQ(std::count(not_results.output.begin(), not_results.output.end(), '\n'), 1) << not_results.output;

  const auto missing = report(fmt::format("{} -o {}", (dir / "missing.h5").string(), (dir / "out").string()));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("missing.h5"), std::string::npos) << missing.output;

  const fs::path results = measured_file("bad_options");
  const auto where = report(fmt::format("{} -o {} --where nonsense", results.string(), (dir / "out").string()));
  EXPECT_EQ(where.exit_code, 2) << where.output;
  EXPECT_EQ(std::count(where.output.begin(), where.output.end(), '\n'), 1) << where.output;
  const auto baseline = report(fmt::format("{} -o {} --baseline cublas", results.string(), (dir / "out").string()));
  EXPECT_EQ(baseline.exit_code, 2) << baseline.output;
  EXPECT_NE(baseline.output.find("cublas"), std::string::npos) << baseline.output;
}

}  // namespace
}  // namespace ks::testing
