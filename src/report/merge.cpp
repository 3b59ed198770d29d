// `kernelsweep merge A.h5 B.h5 ... -o ALL.h5`: one results file from the shards, array tasks or
// resumed jobs of one sweep (docs/merge.md).
//
// Every /runs row of every input is kept, inputs in the order given and each input's rows in their
// order: the current view (view/view.h) takes a point's last row, so a later file's rerun wins.
// The merged file is written under a temporary name and renamed at the end, so a merge that fails
// leaves no half file (and, with --overwrite, the old output as it was).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/printable.h"
#include "kernels/kernel.h"
#include "report/commands.h"
#include "run/run.h"
#include "run/sweep_loading.h"
#include "store/results_file.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

// Bad input (a missing file, a file of another sweep, an output that would be lost...): its message
// is the one line printed, and the exit code is kExitBadInput.
struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Rows copied per batch: bounds the memory a merge of large files takes (rows and their samples).
constexpr std::uint64_t kRowsPerBatch = 4096;

struct Input {
  std::string label;  // the path as given
  ResultsFile file;
  RunInfo info;
};

// Runs `read` on an input; a failure to read it is the input's fault: a refusal naming the file.
template <class Read> auto reading(const Input& input, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const ResultsFileError& error) { throw Refusal(fmt::format("{}: {}", input.label, error.what())); }
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

// What can be refused before any file is opened: missing inputs, an input given twice, an output
// that is an input or that exists without --overwrite.
void check_paths(const MergeRequest& request) {
  for (std::size_t i = 0; i < request.inputs.size(); ++i) {
    const std::string& input = request.inputs[i];
    if (!fs::exists(input)) throw Refusal(fmt::format("{}: no such file", input));
    if (fs::is_directory(input)) throw Refusal(fmt::format("{}: is a folder, not a results file", input));
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(request.inputs[j], input))
        throw Refusal(fmt::format("{}: given twice (as {} too); each file is merged once", input, request.inputs[j]));
    if (same_file(input, request.output))
      throw Refusal(
          fmt::format("{}: the output is one of the inputs; write the merged file elsewhere", request.output));
  }
  if (fs::exists(request.output) && !request.overwrite)
    throw Refusal(fmt::format("{}: exists; pass --overwrite to replace it", request.output));
  if (fs::is_directory(request.output)) throw Refusal(fmt::format("{}: is a folder", request.output));
}

Input open_input(const std::string& path) {
  try {
    ResultsFile file = ResultsFile::open_read_only(path);
    RunInfo info = file.read_info();
    if (info.layout_version > kResultsLayoutVersion)
      throw Refusal(fmt::format("{}: written in layout {} by a newer kernelsweep; this one knows layout {}", path,
                                info.layout_version, kResultsLayoutVersion));
    return Input{path, std::move(file), std::move(info)};
  } catch (const ResultsFileError& error) {
    throw Refusal(fmt::format("{}: not a kernelsweep results file ({})", path, error.what()));
  }
}

// Files of one sweep have the same name and the same text (a shard's file holds the whole sweep
// file's text, so the shards of a sweep agree too).
void check_one_sweep(const Input& first, const Input& other) {
  if (other.info.sweep_name != first.info.sweep_name)
    throw Refusal(fmt::format("{} and {} are results of different sweeps: sweep {} and sweep {}", first.label,
                              other.label, first.info.sweep_name, other.info.sweep_name));
  const std::string change =
      describe_first_differing_line(first.info.sweep_text, other.info.sweep_text, first.label, other.label);
  if (!change.empty())
    throw Refusal(fmt::format("{} and {} are results of different sweeps: sweep {}'s text differs at {}", first.label,
                              other.label, first.info.sweep_name, change));
}

// When the sweep cannot be re-planned here: the plan size is the sum of the shards' when the inputs
// are every shard i/N of one N (a shard's plan_size is its part of the plan).
std::optional<std::int64_t> plan_size_of_shards(const std::vector<Input>& inputs) {
  std::map<std::int64_t, std::int64_t> size_by_shard;
  std::optional<std::int64_t> count;
  for (const Input& input : inputs) {
    const RunInfo& info = input.info;
    if (info.shard_count == 1 || (count && *count != info.shard_count)) return std::nullopt;
    count = info.shard_count;
    size_by_shard.emplace(info.shard_index, info.plan_size);
  }
  if (!count || static_cast<std::int64_t>(size_by_shard.size()) != *count) return std::nullopt;
  std::int64_t total = 0;
  for (const auto& [shard, size] : size_by_shard) total += size;
  return total;
}

// The --where the inputs share (parts selected alike stay that part), or none.
std::string common_where(const std::vector<Input>& inputs) {
  for (const Input& input : inputs)
    if (input.info.where != inputs.front().info.where) return "";
  return inputs.front().info.where;
}

// plan_size of the merged file: the whole plan's, whatever shards the inputs hold. Re-planned from
// the stored sweep text (as `kernelsweep status` does).
std::int64_t unsharded_plan_size(const std::vector<Input>& inputs, Registry& registry) {
  const RunInfo& info = inputs.front().info;
  PlanRequest whole_plan = stored_sweep_request(info);
  whole_plan.shard.clear();
  whole_plan.where = common_where(inputs);
  const auto sweep = load_sweep(whole_plan, registry, false);
  if (const auto points = sweep ? sweep->count() : std::nullopt) return static_cast<std::int64_t>(*points);
  if (auto shards = plan_size_of_shards(inputs)) return *shards;
  std::cerr << fmt::format(
      "kernelsweep merge: the sweep of {} could not be re-planned here (are its kernels in a plugin? pass --plugin), "
      "and the inputs are not every shard of one --shard i/N: plan_size is {}'s ({})\n",
      inputs.front().label, inputs.front().label, info.plan_size);
  return info.plan_size;
}

// The first input's root attributes, with the whole plan (its size; no shard; the --where of the
// inputs where they share one), the labels they all have alike, the earliest start,
// and the latest end (none when an input is unfinished: its sweep is running, or was interrupted).
RunInfo merged_info(const std::vector<Input>& inputs, std::int64_t plan_size) {
  RunInfo info = inputs.front().info;
  info.plan_size = plan_size;
  info.shard_index = 0;
  info.shard_count = 1;
  info.where = common_where(inputs);
  std::vector<RunLabels> labels;
  for (const Input& input : inputs) labels.push_back(input.info.labels);
  info.labels = shared_labels(labels);
  for (const Input& input : inputs) {
    if (!input.info.started_at.empty() && (info.started_at.empty() || input.info.started_at < info.started_at))
      info.started_at = input.info.started_at;
    info.ended_at = std::max(info.ended_at, input.info.ended_at);
  }
  for (const Input& input : inputs) {
    if (!input.info.ended_at.empty()) continue;
    std::cerr << fmt::format(
        "kernelsweep merge: {} is not finished (its sweep is running, or was interrupted): "
        "the merged file's ended_at is left empty\n",
        input.label);
    info.ended_at.clear();
  }
  return info;
}

// Every input's measuring sessions, in the order of the inputs. The merge itself measured nothing
// and is not one of them.
std::vector<SessionInfo> merged_sessions(const std::vector<Input>& inputs) {
  std::vector<SessionInfo> sessions;
  for (const Input& input : inputs) {
    std::vector<SessionInfo> part = reading(input, [&] { return input.file.read_sessions(); });
    sessions.insert(sessions.end(), part.begin(), part.end());
  }
  return sessions;
}

// Where a row's values of one kind lie in the input (/samples or /quantiles), where they go in the
// row, and how the input reads a range of them.
template <class Value> struct RowValues {
  std::uint64_t StoredRun::*offset;
  std::uint64_t StoredRun::*count;
  std::vector<Value> RunRecord::*values;
  std::vector<Value> (ResultsFile::*read)(std::uint64_t, std::uint64_t) const;
};

// Fills each row's values of one kind from the input. The rows of a batch lie together in the
// dataset, so one read serves the batch; rows scattered further apart are read one by one.
template <class Value> void attach(const Input& input, std::vector<StoredRun>& rows, const RowValues<Value>& kind) {
  std::uint64_t first = UINT64_MAX, end = 0, total = 0;
  for (const StoredRun& row : rows) {
    if (row.*kind.count == 0) continue;
    first = std::min(first, row.*kind.offset);
    end = std::max(end, row.*kind.offset + row.*kind.count);
    total += row.*kind.count;
  }
  if (total == 0) return;
  const auto read = [&](std::uint64_t from, std::uint64_t count) {
    return reading(input, [&] { return (input.file.*kind.read)(from, count); });
  };
  const bool one_read = end - first <= 2 * total + kRowsPerBatch;
  const std::vector<Value> span = one_read ? read(first, end - first) : std::vector<Value>{};
  for (StoredRun& row : rows) {
    if (row.*kind.count == 0) continue;
    if (one_read) {
      const auto from = span.begin() + static_cast<std::ptrdiff_t>(row.*kind.offset - first);
      (row.*kind.values).assign(from, from + static_cast<std::ptrdiff_t>(row.*kind.count));
    } else {
      row.*kind.values = read(row.*kind.offset, row.*kind.count);
    }
  }
}

void attach_samples_and_quantiles(const Input& input, std::vector<StoredRun>& rows) {
  attach(input, rows,
         RowValues<double>{&StoredRun::samples_offset, &StoredRun::samples_count, &RunRecord::samples_ns,
                           &ResultsFile::read_samples});
  attach(input, rows,
         RowValues<Quantile>{&StoredRun::quantiles_offset, &StoredRun::quantiles_count, &RunRecord::quantiles,
                             &ResultsFile::read_quantiles});
  attach(input, rows,
         RowValues<double>{&StoredRun::sample_clocks_offset, &StoredRun::sample_clocks_count,
                           &RunRecord::sample_sm_clock_mhz, &ResultsFile::read_sample_clocks});
}

// The input's rows in their order, each with its citations, its samples and its quantiles (append
// gives them their place in the merged /samples and /quantiles: offsets rebased, counts unchanged).
std::uint64_t copy_runs(const Input& input, ResultsFile& out) {
  const std::uint64_t rows = input.file.run_count();
  for (std::uint64_t first = 0; first < rows; first += kRowsPerBatch) {
    std::vector<StoredRun> batch =
        reading(input, [&] { return input.file.read_runs(first, std::min(kRowsPerBatch, rows - first)); });
    attach_samples_and_quantiles(input, batch);
    out.append(batch);
  }
  return rows;
}

// Documents once per digest, rank rows once each (the store skips what it holds already).
void copy_documents_and_ranks(const Input& input, ResultsFile& out) {
  for (const auto& document : reading(input, [&] { return input.file.read_environments(); }))
    out.put_environment(document.digest, document.json);
  for (const auto& document : reading(input, [&] { return input.file.read_protocols(); }))
    out.put_protocol(document.digest, document.json);
  for (const auto& rank : reading(input, [&] { return input.file.read_ranks(); })) out.put_rank(rank);
}

// Beside the output, so that the final rename stays on one file system.
fs::path temporary_path(const fs::path& output) {
  return output.parent_path() / fmt::format(".{}.merging-{}", output.filename().string(), ::getpid());
}

struct Written {
  std::uint64_t rows = 0, samples = 0, sessions = 0;
};

Written write_merged(const std::vector<Input>& inputs, const RunInfo& info, const fs::path& path) {
  Written written;
  const std::vector<SessionInfo> sessions = merged_sessions(inputs);
  written.sessions = sessions.size();
  ResultsFile out = ResultsFile::create(path, info, sessions);
  for (const Input& input : inputs) {
    copy_documents_and_ranks(input, out);
    written.rows += copy_runs(input, out);
  }
  written.samples = out.sample_count();
  out.finish(info.ended_at);
  return written;
}

int merge(const MergeRequest& request, Registry& registry) {
  check_paths(request);
  if (!load_plugins_or_say_why(request.plugins, registry)) return kExitBadInput;
  std::vector<Input> inputs;
  for (const std::string& path : request.inputs) {
    inputs.push_back(open_input(path));
    check_one_sweep(inputs.front(), inputs.back());
  }
  const RunInfo info = merged_info(inputs, unsharded_plan_size(inputs, registry));

  const fs::path output(request.output);
  if (!output.parent_path().empty()) fs::create_directories(output.parent_path());
  const fs::path temporary = temporary_path(output);
  Written written;
  try {
    written = write_merged(inputs, info, temporary);
    fs::rename(temporary, output);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
  std::cout << fmt::format("{}: {} files of sweep {} merged: {} rows, {} samples, {} sessions; plan of {} points\n",
                           request.output, inputs.size(), info.sweep_name, written.rows, written.samples,
                           written.sessions, info.plan_size);
  return kExitOk;
}

}  // namespace

int merge_results(const MergeRequest& request, Registry& registry) {
  try {
    return merge(request, registry);
  } catch (const Refusal& refusal) {
    std::cerr << "kernelsweep merge: " << printable(refusal.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& error) {
    std::cerr << "kernelsweep merge: " << printable(request.output + ": " + error.what()) << "\n";
    return kExitFailure;
  }
}

int merge_results(const MergeRequest& request) {
  Registry registry;
  register_builtin_kernels(registry);
  return merge_results(request, registry);
}

}  // namespace ks
