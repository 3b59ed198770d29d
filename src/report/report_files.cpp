#include "report/report_files.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace ks::report_page {
namespace {

using Json = nlohmann::json;

void flatten(const Json& value, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, item] : value.items()) flatten(item, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  out.emplace_back(prefix, value.is_string() ? value.get<std::string>() : value.dump());
}

// The string at `pointer`, or `fallback` where there is none.
std::string string_at(const Json& json, const char* pointer, const std::string& fallback) {
  const Json::json_pointer at(pointer);
  return json.contains(at) && json.at(at).is_string() ? json.at(at).get<std::string>() : fallback;
}

Json parse_or_empty(const std::string& text) {
  Json parsed = Json::parse(text, nullptr, false);
  return parsed.is_discarded() ? Json::object() : parsed;
}

// "NVIDIA H200 (sm_90, SXM5-141GB)", "AMD EPYC 7B13 (x86_64, 2 cores)".
std::string hardware_of(const Json& environment) {
  const Json::json_pointer at("/spec/hardware");
  const Json hardware =
      environment.contains(at) && environment.at(at).is_object() ? environment.at(at) : Json::object();
  const std::string product = string_at(hardware, "/product", "");
  if (product.empty()) return string_at(environment, "/metadata/title", "unknown hardware");
  std::vector<std::string> details;
  for (const char* key : {"architecture", "formFactor"})
    if (hardware.contains(key) && hardware.at(key).is_string()) details.push_back(hardware.at(key).get<std::string>());
  if (hardware.contains("cores") && hardware.at("cores").is_number())
    details.push_back(fmt::format("{} cores", hardware.at("cores").dump()));
  return details.empty() ? product : fmt::format("{} ({})", product, fmt::join(details, ", "));
}

bool same_hardware(const std::vector<FileSummary>& files) {
  return std::all_of(files.begin(), files.end(), [&](const FileSummary& f) {
    return std::set(f.hardware.begin(), f.hardware.end()) ==
           std::set(files[0].hardware.begin(), files[0].hardware.end());
  });
}

}  // namespace

std::vector<CitedDocument> cited_documents(const std::vector<LoadedFile>& files, const std::vector<ViewRow>& view,
                                           bool environments) {
  std::map<std::string, std::size_t> citations;
  for (const ViewRow& row : view)
    ++citations[environments ? row.run.cited.environment_digest : row.run.cited.protocol_digest];
  std::vector<CitedDocument> out;
  std::map<std::string, std::size_t> position;
  for (const LoadedFile& file : files) {
    for (const DigestedDocument& doc : environments ? file.environments : file.protocols) {
      if (!citations.count(doc.digest)) continue;
      auto [at, added] = position.try_emplace(doc.digest, out.size());
      if (added) {
        const Json json = parse_or_empty(doc.json);
        out.push_back({doc.digest,
                       string_at(json, "/metadata/title", environments ? "environment" : "protocol"),
                       {},
                       {},
                       citations[doc.digest]});
        if (json.contains("spec")) flatten(json.at("spec"), "", out.back().fields);
      }
      out[at->second].files.push_back(file.path);
    }
  }
  // Digests the points cite that no file holds: named, so that the page says what is missing.
  for (const auto& [digest, count] : citations)
    if (!position.count(digest) && !digest.empty())
      out.push_back({digest, "not stored in the results files", {}, {}, count});
  return out;
}

std::vector<FileSummary> file_summaries(const std::vector<LoadedFile>& files, const std::vector<ViewRow>& view) {
  std::vector<FileSummary> out;
  for (const LoadedFile& file : files) {
    FileSummary summary{file.path, file.info, {}, {}, 0};
    std::set<std::string> cited;
    for (const ViewRow& row : view) {
      if (row.file != file.path) continue;
      ++summary.points;
      ++summary.statuses[row.run.status];
      cited.insert(row.run.cited.environment_digest);
    }
    for (const DigestedDocument& doc : file.environments) {
      if (!cited.empty() && !cited.count(doc.digest)) continue;
      const std::string hardware = hardware_of(parse_or_empty(doc.json));
      if (std::find(summary.hardware.begin(), summary.hardware.end(), hardware) == summary.hardware.end())
        summary.hardware.push_back(hardware);
    }
    if (summary.hardware.empty()) summary.hardware.push_back("unknown hardware (no environment document)");
    out.push_back(std::move(summary));
  }
  return out;
}

LegendHardware legend_hardware_of(const std::vector<FileSummary>& files) {
  LegendHardware out;
  if (files.size() < 2 || same_hardware(files)) return out;
  for (const FileSummary& f : files) {
    std::vector<std::string> products;
    for (const std::string& h : f.hardware) products.push_back(h.substr(0, h.find(" (")));
    out[f.path] = fmt::format("{}", fmt::join(products, " + "));
  }
  return out;
}

std::string hardware_statement(const std::vector<FileSummary>& files) {
  if (files.size() == 1) return fmt::format("Measured on {}.", fmt::join(files[0].hardware, " and "));
  const bool same = same_hardware(files);
  if (same)
    return fmt::format("All {} files were measured on {}.", files.size(), fmt::join(files[0].hardware, " and "));
  std::vector<std::string> each;
  for (const auto& f : files) each.push_back(fmt::format("{} on {}", f.path, fmt::join(f.hardware, " and ")));
  return "The files were measured on different hardware: " + fmt::format("{}", fmt::join(each, "; ")) +
         ". Differences between their figures are the hardware's as much as the implementations'.";
}

}  // namespace ks::report_page
