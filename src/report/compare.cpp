// `kernelsweep compare BASE.h5 NEW.h5`: each point of NEW against the same point of BASE (matched
// by point id in the two files' current views), labelled by the rule of report/compare_rule.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/speed_of_light.h"
#include "common/parallel.h"
#include "common/printable.h"
#include "report/commands.h"
#include "report/compare_rule.h"
#include "report/report_format.h"
#include "report/text_table.h"
#include "run/run.h"
#include "view/filter.h"
#include "view/view.h"

namespace ks {
namespace {

using Json = nlohmann::json;

// One input file: what it is, and its points that pass --where.
struct Side {
  std::string path;
  RunInfo info;
  std::vector<ViewRow> rows;
};

// A point of either file and what was found about it.
struct PointComparison {
  const ViewRow* base = nullptr;  // null: added in NEW
  const ViewRow* next = nullptr;  // null: removed from NEW
  // same, faster, slower, unclear; untimed (not timed on a side), implausible (a side's rates are
  // beyond its device: docs/speed-of-light.md), added, removed
  std::string label;
  Verdict verdict;
  bool protocol_differs = false, environment_differs = false;
  std::vector<std::string> notes;

  const ViewRow& any() const { return base ? *base : *next; }
  bool has_ratio() const { return base && next && verdict.ratio > 0; }
};

struct Comparison {
  std::vector<PointComparison> points;
  std::vector<std::string> warnings;
  std::map<std::string, std::size_t> counts;  // by label
};

bool has_samples(const ViewRow& row) { return timed(row.run) && row.run.samples_count > 0; }

// Why a matched point gets no verdict although timed: a side whose rates its device cannot reach (a
// wrong work model, a timer that missed the work) is no basis for a speed-up; empty when neither is.
std::string implausible_note(const PointComparison& point) {
  const bool base = has_flag(point.base->run.flags, "implausible"),
             next = has_flag(point.next->run.flags, "implausible");
  if (!base && !next) return "";
  return fmt::format("left out: {} rates are beyond what the device can do (flag implausible: docs/speed-of-light.md)",
                     base && next ? "both sides'"
                     : base       ? "base's"
                                  : "new's");
}

// --- reading --------------------------------------------------------------------------------------

// Reads /samples in large blocks (one HDF5 read for many points, not one per point) and hands each
// wanted row its samples. `wanted` are indices into `rows`.
template <class Visit>
void for_each_sample_set(const ResultsFile& file, const std::vector<const ViewRow*>& rows, Visit visit) {
  constexpr std::uint64_t kBlockValues = 1u << 22;  // 32 MiB of float64
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return rows[a]->run.samples_offset < rows[b]->run.samples_offset; });
  const std::uint64_t total = file.sample_count();
  std::vector<double> block;
  std::uint64_t block_start = 0;
  for (std::size_t i : order) {
    const std::uint64_t offset = rows[i]->run.samples_offset, count = rows[i]->run.samples_count;
    if (offset < block_start || offset + count > block_start + block.size()) {
      block_start = offset;
      const std::uint64_t length = offset < total ? std::min(total - offset, std::max(count, kBlockValues)) : 0;
      block = file.read_samples(offset, std::max(length, count));  // past the end: the store says so
    }
    const auto first = block.begin() + static_cast<std::ptrdiff_t>(offset - block_start);
    visit(i, std::vector<double>(first, first + static_cast<std::ptrdiff_t>(count)));
  }
}

Side read_side(const ResultsFile& file, const std::string& path, const RowFilter& filter) {
  return {path, file.read_info(), filter.apply(current_view(file, path))};
}

// --- matching and judging ---------------------------------------------------------------------------

std::string status_note(const char* side, const RunRecord& run) {
  if (run.status == "passed") return "";
  std::string note = fmt::format("{} {}", side, run.status);
  if (!run.message.empty()) note += ": " + run.message;
  return note;
}

PointComparison matched(const ViewRow& base, const ViewRow& next) {
  PointComparison point;
  point.base = &base;
  point.next = &next;
  point.protocol_differs = base.run.cited.protocol_digest != next.run.cited.protocol_digest;
  point.environment_differs = base.run.cited.environment_digest != next.run.cited.environment_digest;
  if (point.protocol_differs) point.notes.push_back("protocol differs");
  if (point.environment_differs) point.notes.push_back("environment differs");
  for (const std::string& note : {status_note("base", base.run), status_note("new", next.run)})
    if (!note.empty()) point.notes.push_back(note);
  return point;
}

// Every point of either side: matched ones in NEW's order, then those only in NEW, then those only
// in BASE.
std::vector<PointComparison> match_points(const Side& base, const Side& next) {
  std::unordered_map<std::string, const ViewRow*> base_by_id;
  for (const ViewRow& row : base.rows) base_by_id.emplace(row.run.point_id, &row);
  std::vector<PointComparison> points, added;
  std::set<std::string> seen;
  for (const ViewRow& row : next.rows) {
    const auto found = base_by_id.find(row.run.point_id);
    if (found == base_by_id.end()) {
      PointComparison point;
      point.next = &row;
      point.label = "added";
      added.push_back(point);
      continue;
    }
    seen.insert(row.run.point_id);
    points.push_back(matched(*found->second, row));
  }
  points.insert(points.end(), added.begin(), added.end());
  for (const ViewRow& row : base.rows) {
    if (seen.count(row.run.point_id)) continue;
    PointComparison point;
    point.base = &row;
    point.label = "removed";
    points.push_back(point);
  }
  return points;
}

// Labels the matched points: their samples are read from both files and kept as bootstrap
// distributions (a window around the median of each sample set), then judged.
void judge_points(std::vector<PointComparison>& points, const ResultsFile& base_file, const ResultsFile& next_file,
                  ChangeJudge& judge) {
  std::vector<PointComparison*> timed_points;
  std::vector<const ViewRow*> base_rows, next_rows;
  for (PointComparison& point : points) {
    if (!point.base || !point.next) continue;
    if (const std::string why = implausible_note(point); !why.empty()) {
      point.label = "implausible";
      point.notes.insert(point.notes.begin(), why);
      continue;
    }
    if (has_samples(*point.base) && has_samples(*point.next)) {
      timed_points.push_back(&point);
      base_rows.push_back(point.base);
      next_rows.push_back(point.next);
      continue;
    }
    point.label = "untimed";
  }
  // The files are read by one thread (the HDF5 library is built without thread safety); the
  // bootstraps and intervals, most of the rest of the work, are computed on every core.
  const auto bootstraps = [&](const ResultsFile& file, const std::vector<const ViewRow*>& rows) {
    std::vector<std::vector<double>> samples(rows.size());
    for_each_sample_set(file, rows, [&](std::size_t i, std::vector<double> set) { samples[i] = std::move(set); });
    std::vector<MedianBootstrap> out(rows.size());
    in_parallel(rows.size(), [&](std::size_t i) { out[i] = judge.median_bootstrap(std::move(samples[i])); });
    return out;
  };
  const std::vector<MedianBootstrap> base_medians = bootstraps(base_file, base_rows);
  const std::vector<MedianBootstrap> next_medians = bootstraps(next_file, next_rows);
  in_parallel(timed_points.size(), [&](std::size_t i) {
    PointComparison& point = *timed_points[i];
    point.verdict = std::as_const(judge).judge(base_medians[i], next_medians[i]);
    point.label = change_name(point.verdict.change);
    if (!point.verdict.why.empty()) point.notes.insert(point.notes.begin(), point.verdict.why);
  });
}

// Slowest first: points with a ratio by falling ratio, then the untimed, added and removed ones.
void sort_by_change(std::vector<PointComparison>& points) {
  const auto group = [](const PointComparison& p) {
    if (p.has_ratio()) return 0;
    if (p.label == "added") return 2;
    if (p.label == "removed") return 3;
    return 1;
  };
  std::stable_sort(points.begin(), points.end(), [&](const PointComparison& a, const PointComparison& b) {
    if (group(a) != group(b)) return group(a) < group(b);
    if (group(a) == 0 && a.verdict.ratio != b.verdict.ratio) return a.verdict.ratio > b.verdict.ratio;
    const RunRecord &ra = a.any().run, &rb = b.any().run;
    return std::tie(ra.kernel, ra.implementation, ra.mode, ra.params_json) <
           std::tie(rb.kernel, rb.implementation, rb.mode, rb.params_json);
  });
}

// --- documents that differ ------------------------------------------------------------------------

// A document's spec (or the document) flattened to dotted keys: {"hardware.product": "...", ...}.
void flatten(const Json& value, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) flatten(item, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  out[prefix] = value.is_string() ? value.get<std::string>() : value.dump();
}

std::map<std::string, std::string> flattened_document(const std::vector<DigestedDocument>& documents,
                                                      const std::string& digest) {
  std::map<std::string, std::string> out;
  for (const DigestedDocument& document : documents) {
    if (document.digest != digest) continue;
    const Json json = Json::parse(document.json, nullptr, false);
    if (json.is_discarded()) return out;
    flatten(json.contains("spec") ? json.at("spec") : json, "", out);
  }
  return out;
}

std::string short_digest(const std::string& digest) {
  const std::string hex = digest.rfind("sha256:", 0) == 0 ? digest.substr(7) : digest;
  return hex.substr(0, 12);
}

// "hardware.product: Xeon → EPYC; software.mpi: ... (and 3 more)", or the two digests when the
// documents are not in the files.
std::string describe_difference(const std::map<std::string, std::string>& base,
                                const std::map<std::string, std::string>& next, const std::string& base_digest,
                                const std::string& next_digest) {
  std::vector<std::string> changes;
  std::set<std::string> keys;
  for (const auto& entry : base) keys.insert(entry.first);
  for (const auto& entry : next) keys.insert(entry.first);
  for (const std::string& key : keys) {
    const auto a = base.find(key), b = next.find(key);
    const std::string was = a == base.end() ? "(none)" : a->second, is = b == next.end() ? "(none)" : b->second;
    if (was != is) changes.push_back(fmt::format("{}: {} -> {}", key, was, is));
  }
  std::string text = fmt::format("{} -> {}", short_digest(base_digest), short_digest(next_digest));
  if (changes.empty()) return text;
  const std::size_t shown = std::min<std::size_t>(changes.size(), 3);
  text +=
      ": " + fmt::format("{}", fmt::join(changes.begin(), changes.begin() + static_cast<std::ptrdiff_t>(shown), "; "));
  if (changes.size() > shown) text += fmt::format(" (and {} more)", changes.size() - shown);
  return text;
}

// One warning per kind of document that differs, naming the pairs of documents and what changed.
void warn_about_documents(Comparison& comparison, const ResultsFile& base_file, const ResultsFile& next_file) {
  struct Kind {
    const char* name;
    const char* meaning;
    bool PointComparison::*differs;
    std::string Citations::*digest;
    std::vector<DigestedDocument> (ResultsFile::*read)() const;
  };
  const Kind kinds[] = {
      {"protocols", "a comparison across timing methods", &PointComparison::protocol_differs,
       &Citations::protocol_digest, &ResultsFile::read_protocols},
      {"environments", "a comparison across machines or software", &PointComparison::environment_differs,
       &Citations::environment_digest, &ResultsFile::read_environments},
  };
  std::size_t matched = 0;
  for (const PointComparison& point : comparison.points) matched += point.base && point.next;
  for (const Kind& kind : kinds) {
    std::map<std::pair<std::string, std::string>, std::size_t> pairs;  // (base digest, new digest) -> points
    for (const PointComparison& point : comparison.points)
      if (point.*kind.differs) ++pairs[{point.base->run.cited.*kind.digest, point.next->run.cited.*kind.digest}];
    if (pairs.empty()) continue;
    std::size_t differing = 0;
    for (const auto& entry : pairs) differing += entry.second;
    const auto base_documents = (base_file.*kind.read)();
    const auto next_documents = (next_file.*kind.read)();
    std::string text = fmt::format("{} of {} matched points cite different {} in BASE and NEW ({})", differing, matched,
                                   kind.name, kind.meaning);
    for (const auto& [digests, count] : pairs) {
      text += fmt::format(
          "; {} point{}: {}", count, count == 1 ? "" : "s",
          describe_difference(flattened_document(base_documents, digests.first),
                              flattened_document(next_documents, digests.second), digests.first, digests.second));
    }
    comparison.warnings.push_back(text);
  }
}

// --- output ---------------------------------------------------------------------------------------

std::string milliseconds_text(double ns) {
  const double ms = ns / 1e6;
  return ms >= 1000 ? fmt::format("{:.0f}", ms) : fmt::format("{:.4g}", ms);
}

std::optional<double> median_ns(const ViewRow* row) {
  if (!row || !timed(row->run) || !std::isfinite(row->run.stats.median_ns)) return std::nullopt;
  return row->run.stats.median_ns;
}

std::string rule_text(const ChangeRule& rule) {
  return fmt::format(
      "ratio = NEW median / BASE median, with its {:g}% bootstrap interval; same when the interval lies within "
      "{:.4g}..{:.4g} (±{:g}%), slower or faster when it lies wholly beyond, unclear otherwise (docs/compare.md)",
      rule.confidence * 100, 1 / (1 + rule.threshold), 1 + rule.threshold, rule.threshold * 100);
}

std::string file_text(const Side& side) {
  return fmt::format("{} (sweep {}, {} points, git {}, host {}, started {})", side.path, side.info.sweep_name,
                     side.rows.size(), side.info.git_commit.empty() ? "unknown" : side.info.git_commit, side.info.host,
                     side.info.started_at);
}

std::size_t count_of(const Comparison& comparison, const std::string& label) {
  const auto found = comparison.counts.find(label);
  return found == comparison.counts.end() ? 0 : found->second;
}

std::string summary_text(const Comparison& comparison) {
  const auto count = [&](const char* label) { return count_of(comparison, label); };
  std::size_t matched = 0;
  for (const char* label : {"slower", "faster", "same", "unclear", "untimed", "implausible"}) matched += count(label);
  const std::string implausible = count("implausible") > 0 ? fmt::format(", {} implausible", count("implausible")) : "";
  return fmt::format(
      "{} points matched: {} slower, {} faster, {} same, {} unclear, {} not timed on both sides{}; "
      "{} added, {} removed",
      matched, count("slower"), count("faster"), count("same"), count("unclear"), count("untimed"), implausible,
      count("added"), count("removed"));
}

// The table's cells: one row of text per point.
std::vector<std::string> cells_of(const PointComparison& point) {
  const RunRecord& run = point.any().run;
  const auto base_ms = median_ns(point.base), next_ms = median_ns(point.next);
  std::string ratio, change, interval;
  if (point.has_ratio()) {
    ratio = fmt::format("{:.3f}", point.verdict.ratio);
    change = fmt::format("{:+.1f}%", (point.verdict.ratio - 1) * 100);
  }
  if (point.verdict.has_interval)
    interval = fmt::format("{:.3f}..{:.3f}", point.verdict.interval.low, point.verdict.interval.high);
  return {run.kernel,
          run.implementation,
          run.mode,
          parameters_text(point.any().params),
          base_ms ? milliseconds_text(*base_ms) : "",
          next_ms ? milliseconds_text(*next_ms) : "",
          ratio,
          change,
          interval,
          point.label,
          fmt::format("{}", fmt::join(point.notes, "; "))};
}

std::vector<std::string> headings(const ChangeRule& rule) {
  return {"kernel",
          "implementation",
          "mode",
          "params",
          "base ms",
          "new ms",
          "ratio",
          "change",
          fmt::format("{:g}% interval", rule.confidence * 100),
          "label",
          "note"};
}

const std::vector<bool> kRightAligned{false, false, false, false, true, true, true, true, true, false, false};

void print_table(const Comparison& comparison, const Side& base, const Side& next, const ChangeRule& rule) {
  std::cout << "base: " << file_text(base) << "\n"
            << "new:  " << file_text(next) << "\n"
            << "rule: " << rule_text(rule) << "\n";
  for (const std::string& warning : comparison.warnings) std::cout << "WARNING: " << warning << "\n";
  std::vector<std::vector<std::string>> rows{headings(rule)};
  for (const PointComparison& point : comparison.points) rows.push_back(cells_of(point));
  std::cout << "\n" << aligned_text_table(rows, kRightAligned) << "\n" << summary_text(comparison) << "\n";
}

void print_markdown(const Comparison& comparison, const Side& base, const Side& next, const ChangeRule& rule) {
  std::cout << "# kernelsweep compare\n\n"
            << "- base: " << report_page::pipes_escaped(file_text(base)) << "\n"
            << "- new: " << report_page::pipes_escaped(file_text(next)) << "\n"
            << "- rule: " << rule_text(rule) << "\n\n";
  for (const std::string& warning : comparison.warnings)
    std::cout << "> **Warning:** " << report_page::pipes_escaped(warning) << "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const PointComparison& point : comparison.points) rows.push_back(cells_of(point));
  std::cout << markdown_table(headings(rule), rows, kRightAligned) << "\n" << summary_text(comparison) << "\n";
}

Json number_or_null(std::optional<double> value) { return value ? Json(*value) : Json(nullptr); }

Json side_json(const Side& side) {
  return {{"file", side.path},          {"sweep", side.info.sweep_name},
          {"points", side.rows.size()}, {"git_commit", side.info.git_commit},
          {"host", side.info.host},     {"started_at", side.info.started_at}};
}

Json point_json(const PointComparison& point) {
  const RunRecord& run = point.any().run;
  const auto ms = [](std::optional<double> ns) { return ns ? std::optional<double>(*ns / 1e6) : std::nullopt; };
  return {
      {"point_id", run.point_id},
      {"kernel", run.kernel},
      {"implementation", run.implementation},
      {"mode", run.mode},
      {"params", point.any().params},
      {"label", point.label},
      {"base_median_ms", number_or_null(ms(median_ns(point.base)))},
      {"new_median_ms", number_or_null(ms(median_ns(point.next)))},
      {"ratio", point.has_ratio() ? Json(point.verdict.ratio) : Json(nullptr)},
      {"change_percent", point.has_ratio() ? Json((point.verdict.ratio - 1) * 100) : Json(nullptr)},
      {"interval", point.verdict.has_interval ? Json::array({point.verdict.interval.low, point.verdict.interval.high})
                                              : Json(nullptr)},
      {"base_samples", point.base ? Json(point.base->run.samples_count) : Json(nullptr)},
      {"new_samples", point.next ? Json(point.next->run.samples_count) : Json(nullptr)},
      {"base_status", point.base ? Json(point.base->run.status) : Json(nullptr)},
      {"new_status", point.next ? Json(point.next->run.status) : Json(nullptr)},
      {"protocol_differs", point.protocol_differs},
      {"environment_differs", point.environment_differs},
      {"note", fmt::format("{}", fmt::join(point.notes, "; "))}};
}

void print_json(const Comparison& comparison, const Side& base, const Side& next, const ChangeRule& rule,
                double fail_above_percent) {
  Json summary = Json::object();
  for (const char* label : {"slower", "faster", "same", "unclear", "untimed", "implausible", "added", "removed"})
    summary[label] = count_of(comparison, label);
  const Json out = {{"base", side_json(base)},
                    {"new", side_json(next)},
                    {"rule",
                     {{"statistic", "median"},
                      {"interval", "bootstrap, exact"},
                      {"confidence", rule.confidence},
                      {"threshold_percent", rule.threshold * 100},
                      {"min_samples", rule.min_samples},
                      {"text", rule_text(rule)}}},
                    {"fail_above_percent", fail_above_percent >= 0 ? Json(fail_above_percent) : Json(nullptr)},
                    {"warnings", comparison.warnings},
                    {"summary", summary}};
  // The points follow, one object per line: a file of 100,000 points stays readable with grep and
  // is written in a fraction of the time of one indented tree. The lines are made on every core.
  std::vector<std::string> lines(comparison.points.size());
  in_parallel(lines.size(), [&](std::size_t i) { lines[i] = point_json(comparison.points[i]).dump(); });
  std::string text = out.dump(2);
  text.resize(text.size() - 2);  // the closing "\n}"
  text += ",\n  \"points\": [";
  if (!lines.empty()) text += fmt::format("\n    {}", fmt::join(lines, ",\n    "));
  text += comparison.points.empty() ? "]\n}\n" : "\n  ]\n}\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
}

// The points labelled slower whose ratio is above 1 + PCT/100.
std::size_t points_failing(const Comparison& comparison, double fail_above_percent) {
  if (fail_above_percent < 0) return 0;
  std::size_t failing = 0;
  for (const PointComparison& point : comparison.points)
    failing += point.label == "slower" && point.verdict.ratio > 1 + fail_above_percent / 100;
  return failing;
}

int bad_input(const std::string& what) {
  std::cerr << "kernelsweep compare: " << printable(what) << "\n";
  return kExitBadInput;
}

}  // namespace

int compare_results(const CompareRequest& request) {
  if (!(request.threshold_percent > 0) || !std::isfinite(request.threshold_percent))
    return bad_input(fmt::format("--threshold must be a percentage above 0, got {}", request.threshold_percent));
  if (std::isnan(request.fail_above_percent)) return bad_input("--fail-above must be a percentage");
  ChangeRule rule;
  rule.threshold = request.threshold_percent / 100;
  ChangeJudge judge(rule);

  RowFilter filter;
  try {
    filter = RowFilter::parse(request.where);
  } catch (const FilterError& error) { return bad_input(error.what()); }

  Comparison comparison;
  Side base, next;
  try {
    const ResultsFile base_file = ResultsFile::open_read_only(request.base);
    const ResultsFile next_file = ResultsFile::open_read_only(request.next);
    base = read_side(base_file, request.base, filter);
    next = read_side(next_file, request.next, filter);
    comparison.points = match_points(base, next);
    judge_points(comparison.points, base_file, next_file, judge);
    warn_about_documents(comparison, base_file, next_file);
  } catch (const ResultsFileError& error) { return bad_input(error.what()); }
  sort_by_change(comparison.points);
  for (const PointComparison& point : comparison.points) ++comparison.counts[point.label];

  if (request.format == "json") print_json(comparison, base, next, rule, request.fail_above_percent);
  else if (request.format == "md") print_markdown(comparison, base, next, rule);
  else print_table(comparison, base, next, rule);
  std::cout.flush();

  const std::size_t failing = points_failing(comparison, request.fail_above_percent);
  if (failing == 0) return kExitOk;
  std::cerr << fmt::format("kernelsweep compare: {} point{} slower by more than {:g}% (--fail-above)\n", failing,
                           failing == 1 ? " is" : "s are", request.fail_above_percent);
  return kExitFailure;
}

}  // namespace ks
