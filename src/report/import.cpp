// `kernelsweep import TOOL FILE -o OUT.h5`: another tool's benchmark results as a results file and
// kernelindex documents, as a sweep leaves them. Each tool's mapping lives beside this file
// (import_liger.cpp); what they share is here: the output checks, the order of the rows, the
// results file, the documents, the summary.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "build_info.h"
#include "common/canonical_json.h"
#include "common/clock.h"
#include "env/environment.h"
#include "kernels/kernel.h"
#include "report/commands.h"
#include "report/import.h"
#include "report/import_liger.h"
#include "run/run.h"
#include "store/results_file.h"

namespace ks {

Citations ImportedRun::citations() const {
  const Json& spec = run.at("spec");
  return {spec.at("protocolDigest").get<std::string>(), spec.at("environmentDigest").get<std::string>(),
          spec.at("workloadDigest").get<std::string>(), spec.at("implementationDigest").get<std::string>()};
}

namespace {

namespace fs = std::filesystem;

std::string read_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportInputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Titles of kernelsweep's built-in kernels, for the documents of runs of a kernel of the same name.
KernelTitles builtin_kernel_titles() {
  auto registry = std::make_shared<Registry>();
  register_builtin_kernels(*registry);
  return [registry](const std::string& kernel) {
    const KernelSpec* spec = registry->find(kernel);
    return spec && !spec->title.empty() ? spec->title : kernel;
  };
}

ImportedFile import_tool(const ImportRequest& request, const std::string& text) {
  if (request.tool == "liger") return import_liger_csv(text, request.input, builtin_kernel_titles());
  throw ImportInputError(fmt::format("{}: no importer for tool '{}' (known: liger)", request.input, request.tool));
}

bool timed_run(const RunRecord& record) { return std::isfinite(record.stats.median_ns); }

// The order the runs are stored in: a point's rows together, points in the order they first
// appear; within a point, the rows without timing (memory measurements) first. The current view
// (view/view.h) takes a point's last row, so a point with a timing is shown by it.
std::vector<std::size_t> storage_order(const std::vector<ImportedRun>& runs) {
  std::unordered_map<std::string, std::size_t> group_of;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto [at, first] = group_of.try_emplace(runs[i].record.point_id, groups.size());
    if (first) groups.emplace_back();
    groups[at->second].push_back(i);
  }
  std::vector<std::size_t> order;
  order.reserve(runs.size());
  for (const auto& group : groups) {
    for (std::size_t i : group)
      if (!timed_run(runs[i].record)) order.push_back(i);
    for (std::size_t i : group)
      if (timed_run(runs[i].record)) order.push_back(i);
  }
  return order;
}

std::size_t distinct_points(const std::vector<ImportedRun>& runs) {
  std::set<std::string> points;
  for (const ImportedRun& run : runs) points.insert(run.record.point_id);
  return points.size();
}

fs::path documents_directory(const ImportRequest& request) {
  if (!request.documents_directory.empty()) return request.documents_directory;
  const fs::path folder = fs::path(request.output).parent_path();
  return (folder.empty() ? fs::path(".") : folder) / "kernelindex";
}

std::string command_line(const ImportRequest& request) {
  std::string line = fmt::format("kernelsweep import {} {} -o {}", request.tool, request.input, request.output);
  if (!request.documents_directory.empty()) line += " --documents " + request.documents_directory;
  if (request.kernelindex_format != "json") line += " --kernelindex-format " + request.kernelindex_format;
  if (request.overwrite) line += " --overwrite";
  return line;
}

// The root attributes of an imported file: the tool's file as the "sweep", no sweep text (there is no
// sweep file to re-plan: `status` counts what the file holds), the import as its one session.
RunInfo import_info(const ImportRequest& request, const ImportedFile& imported) {
  RunInfo info;
  info.sweep_name = imported.sweep_name;
  info.sweep_path = request.input;
  info.plan_size = static_cast<std::int64_t>(distinct_points(imported.runs));
  info.kernelsweep_version = build::version;
  info.git_commit = build::git_commit;
  info.started_at = iso_utc_now();
  info.world_size = 1;
  info.host = read_host_info().hostname;
  info.command_line = command_line(request);
  return info;
}

void write_outputs(const ImportRequest& request, const ImportedFile& imported, const fs::path& documents) {
  const fs::path output = request.output;
  if (!output.parent_path().empty()) fs::create_directories(output.parent_path());
  ResultsFile file = ResultsFile::create(output, import_info(request, imported));
  DocumentWriter writer(documents, request.kernelindex_format);
  std::set<const CitedDocument*> stored;
  std::vector<StoredRun> rows;
  rows.reserve(imported.runs.size());
  for (std::size_t i : storage_order(imported.runs)) {
    const ImportedRun& run = imported.runs[i];
    if (stored.insert(run.protocol.get()).second)
      file.put_protocol(run.protocol->digest, canonical_json(run.protocol->document));
    if (stored.insert(run.environment.get()).second)
      file.put_environment(run.environment->digest, canonical_json(run.environment->document));
    rows.emplace_back(run.record, run.citations());
    writer.write(run.run, {*run.protocol, *run.environment, run.workload, *run.implementation});
  }
  file.append(rows);
  writer.flush();
  file.finish(iso_utc_now());
}

// "imported N of M rows ..." and, when some were left out, how many for each reason and where.
void print_summary(const ImportRequest& request, const ImportedFile& imported, const fs::path& documents) {
  std::cerr << fmt::format("{}: imported {} of {} rows ({} points) into {}; documents in {}\n", request.input,
                           imported.runs.size(), imported.rows, distinct_points(imported.runs), request.output,
                           documents.string());
  if (imported.skipped.empty()) return;
  std::map<std::string, std::vector<std::size_t>> lines_by_reason;
  for (const SkippedRow& row : imported.skipped) lines_by_reason[row.reason].push_back(row.line);
  std::cerr << fmt::format("skipped {} rows:\n", imported.skipped.size());
  for (const auto& [reason, lines] : lines_by_reason) {
    std::string where;
    for (std::size_t i = 0; i < lines.size() && i < 5; ++i) where += fmt::format("{}{}", i ? ", " : "", lines[i]);
    if (lines.size() > 5) where += ", ...";
    std::cerr << fmt::format("  {:>5}  {} (line{} {})\n", lines.size(), reason, lines.size() > 1 ? "s" : "", where);
  }
}

}  // namespace

int import_results(const ImportRequest& request) {
  try {
    const bool exists = fs::exists(request.output);
    if (exists && !request.overwrite) {
      std::cerr << fmt::format("{}: results file exists; pass --overwrite to replace it\n", request.output);
      return kExitBadInput;
    }
    const ImportedFile imported = import_tool(request, read_input(request.input));
    const fs::path documents = documents_directory(request);
    if (exists) fs::remove(request.output);
    // jsonl shards are appended to: an overwritten import starts them again. Files of the json format
    // are replaced one by one, as the runs of the same names are written.
    if (request.overwrite && request.kernelindex_format == "jsonl") remove_document_store(documents);
    write_outputs(request, imported, documents);
    print_summary(request, imported, documents);
    return imported.skipped.empty() ? kExitOk : kExitFailure;
  } catch (const ImportInputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace ks
