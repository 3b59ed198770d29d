#include "kernelindex/document_reader.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernelindex/document_index.h"
#include "kernelindex/kernelindex.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::size_t read_shards(const fs::path& folder, const DocumentFilter& filter,
                        const std::function<void(std::string_view)>& visit) {
  DocumentIndexReader reader(folder);
  std::size_t read = 0;
  reader.for_each_entry([&](const IndexEntry& entry) {
    if (!filter.matches(entry.point_id, entry.run_name)) return;
    visit(reader.read_line(entry));
    ++read;
  });
  return read;
}

std::size_t read_json_files(const fs::path& folder, const DocumentFilter& filter,
                            const std::function<void(std::string_view)>& visit) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::size_t read = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    const Json object = Json::parse(in, nullptr, false);
    if (!is_kernelindex_object(object)) continue;  // another file
    const Json& run = object["run"];
    const std::string point_id = run_point_id(run);
    const std::string run_name = run.value("/metadata/name"_json_pointer, std::string());
    if (!filter.matches(point_id, run_name)) continue;
    visit(object.dump(-1, ' ', false, Json::error_handler_t::replace));
    ++read;
  }
  return read;
}

}  // namespace

std::size_t for_each_document(const fs::path& folder, const DocumentFilter& filter,
                              const std::function<void(std::string_view line)>& visit) {
  if (!fs::is_directory(folder))
    throw std::runtime_error(fmt::format("{}: not a folder of kernelindex documents", folder.string()));
  if (fs::exists(folder / kDocumentIndexFileName)) return read_shards(folder, filter, visit);
  return read_json_files(folder, filter, visit);
}

}  // namespace ks
