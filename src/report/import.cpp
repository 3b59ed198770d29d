// `kernelsweep import TOOL FILE -o OUT.h5`: another tool's benchmark results as a results file and
// kernelindex documents, as a sweep leaves them. Each tool's mapping lives beside this file
// (import_liger.cpp); what they share is here: what a GPU's name says, the output checks, the order
// of the rows, the results file, the documents, the summary.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "build_info.h"
#include "common/canonical_json.h"
#include "common/clock.h"
#include "common/json_text.h"
#include "env/environment.h"
#include "kernels/kernel.h"
#include "report/commands.h"
#include "report/import.h"
#include "report/import_liger.h"
#include "run/run.h"
#include "store/results_file.h"

namespace ks {

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
  for (auto& group : groups) {
    std::stable_partition(group.begin(), group.end(), [&](std::size_t i) { return !timed_run(runs[i].record); });
    order.insert(order.end(), group.begin(), group.end());
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
  for (const std::string& label : request.labels) line += " --label " + label;
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
  info.labels = parse_labels(request.labels);
  return info;
}

// A run document with the import's --label pairs among its labels (the tool's own, such as
// liger_version, give way to them).
Json with_labels(const Json& run, const RunLabels& labels) {
  if (labels.empty()) return run;
  Json labelled = run;
  for (const auto& [key, value] : labels) labelled["metadata"]["labels"][key] = value;
  return labelled;
}

void write_outputs(const ImportRequest& request, const ImportedFile& imported, const fs::path& documents) {
  const fs::path output = request.output;
  if (!output.parent_path().empty()) fs::create_directories(output.parent_path());
  const RunInfo info = import_info(request, imported);
  const RunLabels& labels = info.labels;
  ResultsFile file = ResultsFile::create(output, info);
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
    rows.emplace_back(run.record, run.cited);
    writer.write(with_labels(run.run, labels),
                 {*run.protocol, *run.environment, json_text(run.workload), *run.implementation});
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

bool starts_with_word(const std::string& name, const std::string& word) {
  return name.size() > word.size() && name.compare(0, word.size(), word) == 0 && name[word.size()] == ' ';
}

// The compute architecture of a product, from its name: NVIDIA's compute capability as sm_XY, AMD's
// gfx target. The patterns are matched anywhere in the name, between word boundaries.
std::string architecture_of(const std::string& name) {
  static const std::vector<std::pair<std::regex, std::string>> table = [] {
    const std::pair<const char*, const char*> rows[] = {
        {R"(\bP100\b)", "sm_60"},
        {R"(\bV100\b)", "sm_70"},
        {R"(\bT4\b|\bRTX 20\d\d\b)", "sm_75"},
        {R"(\bA100\b|\bA30\b|\bA800\b)", "sm_80"},
        {R"(\bA(10G?|16|2|40)\b|\bRTX 30\d\d\b|\bRTX A\d{4}\b)", "sm_86"},
        {R"(\bL(4|20|40S?)\b|\bRTX 40\d\d\b|\bRTX \d{4} Ada\b)", "sm_89"},
        {R"(\bGH200\b|\bH100\b|\bH200\b|\bH800\b|\bH20\b)", "sm_90"},
        {R"(\bGB200\b|\bB200\b|\bB100\b)", "sm_100"},
        {R"(\bGB300\b|\bB300\b)", "sm_103"},
        {R"(\bRTX 50\d\d\b|\bRTX PRO \d{4} Blackwell\b)", "sm_120"},
        {R"(\bMI100\b)", "gfx908"},
        {R"(\bMI2(10|50X?)\b)", "gfx90a"},
        {R"(\bMI3(00[AX]?|25X)\b)", "gfx942"},
        {R"(\bMI35[05]X\b)", "gfx950"},
    };
    std::vector<std::pair<std::regex, std::string>> out;
    for (const auto& [pattern, architecture] : rows) out.emplace_back(std::regex(pattern), architecture);
    return out;
  }();
  for (const auto& [pattern, architecture] : table)
    if (std::regex_search(name, pattern)) return architecture;
  return {};
}

}  // namespace

std::string gpu_vendor(const std::string& name) {
  static const std::pair<const char*, const char*> leading[] = {
      {"NVIDIA", "nvidia"}, {"AMD", "amd"}, {"Intel(R)", "intel"}, {"Intel", "intel"}};
  for (const auto& [word, vendor] : leading)
    if (starts_with_word(name, word)) return vendor;
  static const std::pair<const char*, const char*> lines[] = {{"Tesla", "nvidia"},  {"GeForce", "nvidia"},
                                                              {"Quadro", "nvidia"}, {"Radeon", "amd"},
                                                              {"Instinct", "amd"},  {"Data Center GPU", "intel"}};
  for (const auto& [word, vendor] : lines)
    if (name.find(word) != std::string::npos) return vendor;
  return "unknown";
}

std::string gpu_name_without_vendor(const std::string& name) {
  for (const char* word : {"NVIDIA", "AMD", "Intel(R)", "Intel"})
    if (starts_with_word(name, word)) return name.substr(std::string(word).size() + 1);
  return name;
}

nlohmann::json hardware_of_gpu_name(const std::string& name) {
  const GpuProduct product = gpu_product(name);
  nlohmann::json hardware = {{"vendor", gpu_vendor(name)}, {"product", product.product}};
  if (!product.form_factor.empty()) hardware["formFactor"] = product.form_factor;
  if (const std::string architecture = architecture_of(name); !architecture.empty())
    hardware["architecture"] = architecture;
  return hardware;
}

int import_results(const ImportRequest& request) {
  try {
    parse_labels(request.labels);  // bad labels are refused before anything is written
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
  } catch (const LabelError& e) {
    std::cerr << "kernelsweep import: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace ks
