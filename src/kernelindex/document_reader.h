#pragma once
// Reads back the kernelindex objects of a documents folder, whatever format they were written in:
// jsonl shards through their index (a point or run asked for decompresses only its block), json files
// in name order. Each object comes as its compact line (the text a jsonl shard holds).
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <string_view>

namespace ks {

// The documents to read: those of these point ids or run names; every document when both are empty.
struct DocumentFilter {
  std::set<std::string> points, runs;

  bool everything() const { return points.empty() && runs.empty(); }
  bool matches(const std::string& point_id, const std::string& run_name) const {
    return everything() || points.count(point_id) > 0 || runs.count(run_name) > 0;
  }
};

// Calls `visit` with each document's line; returns how many. Throws std::runtime_error naming the file
// when the folder is missing or a shard or its index cannot be read.
std::size_t for_each_document(const std::filesystem::path& folder, const DocumentFilter& filter,
                              const std::function<void(std::string_view line)>& visit);

}  // namespace ks
