// One sweep end to end (`kernelsweep run`): every rank reads the sweep file, rank 0 opens the outputs (new,
// --resume or --overwrite) and plans, the ranks measure the points rank 0 hands out, rank 0 stores.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "build_info.h"
#include "calibration/sentinel.h"
#include "cluster/interruption.h"
#include "cluster/mpi_world.h"
#include "cluster/sweep_runner.h"
#include "cluster/worker_process.h"
#include "common/clock.h"
#include "common/printable.h"
#include "kernelindex/kernelindex.h"
#include "plan/plan.h"
#include "run/outputs.h"
#include "run/run.h"
#include "run/sweep_loading.h"
#include "store/space_reserve.h"
#include "store/writer_lock.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

struct OutputPaths {
  fs::path directory, results_file, documents;
  std::string format;  // auto, json or jsonl, as asked for (documents_writer resolves auto)
  ShardOptions shards;
};

// A shard's results and documents get names of their own ("NAME.shard-1-of-3.h5", kernelindex/shard-1-of-3),
// so that the shards of a sweep can share one output folder; --results-file names the file as given.
std::string shard_suffix(const PlanOptions& shard) {
  return shard.shard_count > 1 ? fmt::format("shard-{}-of-{}", shard.shard_index, shard.shard_count) : "";
}

OutputPaths output_paths(const SweepSpec& spec, const RunRequest& args, const PlanOptions& shard) {
  OutputPaths out;
  out.directory = args.output_directory.empty() ? fs::path(spec.output.directory) : fs::path(args.output_directory);
  fs::path file = !args.results_file.empty()          ? args.results_file
                  : !spec.output.results_file.empty() ? spec.output.results_file
                                                      : spec.name + ".h5";
  const std::string suffix = shard_suffix(shard);
  if (args.results_file.empty() && !suffix.empty())
    file.replace_filename(file.stem().string() + "." + suffix + file.extension().string());
  out.results_file = file.is_absolute() || !args.results_file.empty() ? file : out.directory / file;
  out.documents = suffix.empty() ? out.directory / "kernelindex" : out.directory / "kernelindex" / suffix;
  out.format = args.kernelindex_format.empty() ? spec.output.kernelindex_format : args.kernelindex_format;
  out.shards.compression = compression_named(args.kernelindex_compression.empty() ? spec.output.kernelindex_compression
                                                                                  : args.kernelindex_compression);
  out.shards.shard_bytes = spec.output.kernelindex_shard_mb << 20;
  return out;
}

// --overwrite's removal of the documents of the run it replaces: the document files kernelsweep
// writes (kernelindex objects, jsonl shards and their index, documents cut short), never another file a user
// keeps in the folder; the folder goes only when that leaves it empty.
void remove_documents(const fs::path& folder) {
  if (!fs::is_directory(folder)) return;
  std::vector<fs::path> ours;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const fs::path& file = entry.path();
    if (!entry.is_regular_file()) continue;
    if (is_document_store_file(file.filename().string()) || file.extension() == ".partial" ||
        file.filename() == RunOutputs::kDocumentsSpaceFile || file.filename() == PendingDocuments::kFileName) {
      ours.push_back(file);
    } else if (file.extension() == ".json") {
      std::ifstream in(file);
      if (is_kernelindex_object(nlohmann::json::parse(in, nullptr, false))) ours.push_back(file);
    }
  }
  for (const fs::path& file : ours) fs::remove(file);
  if (fs::is_empty(folder)) fs::remove(folder);
}

// What a resume needs to know of the points a results file holds, in 32 bytes a point: those with a
// row that passed (measured: this run skips them), and those whose latest row is `skipped` (left so,
// unless this run can measure them).
struct MeasuredBefore {
  PointIdSet passed, skipped;
};

MeasuredBefore measured_before(const ResultsFile& file) {
  MeasuredBefore out;
  out.passed.reserve(file.run_count());
  // The rows that did not pass, in row order: a point's last one says whether it is left skipped
  // (a point that passed once is measured whatever came after).
  struct NotPassed {
    PointKey key;
    bool skipped = false;
  };
  std::vector<NotPassed> not_passed;
  file.scan_point_keys([&](std::uint64_t, const PointKey& key, std::size_t status) {
    const std::string_view name = kStatuses[status];
    if (name == "passed") out.passed.add(key);
    else not_passed.push_back({key, name == "skipped"});
  });
  out.passed.seal();
  std::ranges::stable_sort(not_passed, PointKeyLess(), &NotPassed::key);
  for (std::size_t i = 0; i < not_passed.size(); ++i) {
    const bool latest = i + 1 == not_passed.size() || not_passed[i + 1].key != not_passed[i].key;
    if (latest && not_passed[i].skipped) out.skipped.add(not_passed[i].key);
  }
  out.skipped.seal();
  return out;
}

// Why `file` cannot be completed by this run (another shard, another --where, another sweep file);
// empty when it can.
std::string why_not_resumable(const ResultsFile& file, const LoadedSweep& sweep, const RunRequest& args,
                              const PlanOptions& shard) {
  const std::string path = file.path().string();
  const RunInfo stored = file.read_info();
  if (stored.shard_index != static_cast<std::int64_t>(shard.shard_index) ||
      stored.shard_count != static_cast<std::int64_t>(shard.shard_count)) {
    const auto name = [](std::uint64_t index, std::uint64_t count) {
      return count > 1 ? "shard " + shard_text(index, count) : std::string("the whole plan");
    };
    return fmt::format("{}: cannot resume: the file holds {} and this run measures {}", path,
                       name(stored.shard_index, stored.shard_count), name(shard.shard_index, shard.shard_count));
  }
  // A file of the whole plan may be completed a part at a time (--where narrows what this run
  // measures); a file made for a part is that part's.
  if (!stored.where.empty() && stored.where != args.plan.where)
    return fmt::format("{}: cannot resume: the file holds the points of --where '{}'; resume it with the same --where",
                       path, stored.where);
  if (!args.labels.empty() && parse_labels(args.labels) != stored.labels)
    return fmt::format("{}: cannot resume: the file's labels are '{}'; resume it with the same --label, or none", path,
                       labels_text(stored.labels));
  const std::string change = describe_sweep_text_change(stored.sweep_text, sweep.spec.source_text);
  if (!change.empty())
    return fmt::format("{}: cannot resume: the sweep file {} differs from the one this results file was made with: {}",
                       path, sweep.spec.source_path, change);
  return "";
}

// Rank 0, --resume of an existing file: the file to complete, its statuses read on this thread while
// another walks the plan (all reckoning; only this thread touches HDF5), and the plan then marked
// with what the file holds. Nothing when the file cannot be completed by this run (`problem` says
// why) or the plan is refused (the reason printed).
std::optional<ResultsFile> resume_with_plan(const LoadedSweep& sweep, const RunRequest& args, const OutputPaths& paths,
                                            const PlanOptions& shard, std::optional<WorkPlan>& plan,
                                            std::string& problem) {
  // Opened (and checked, by readers it forks) before the planner starts: a child forked beside a
  // running thread would hold a copy of any lock that thread held at that moment.
  ResultsFile file = ResultsFile::open_for_append(paths.results_file);
  problem = why_not_resumable(file, sweep, args, shard);
  if (!problem.empty()) return std::nullopt;
  PositionedKeys keys;
  std::exception_ptr plan_failure;
  std::jthread planner([&] {
    try {
      plan = sweep.work_plan(&keys);
    } catch (...) { plan_failure = std::current_exception(); }
  });
  const MeasuredBefore before = measured_before(file);  // the planner joins on a throw
  planner.join();
  if (plan_failure) std::rethrow_exception(plan_failure);
  if (!plan) return std::nullopt;
  plan->mark_before(keys, before.passed, before.skipped);
  return file;
}

// Rank 0: a new results file for a plan of `plan_size` points (replacing an old one on --overwrite),
// or a one-line reason why not. Its folder is there already, made before the writer lock was taken.
std::optional<ResultsFile> new_results(const LoadedSweep& sweep, const RunRequest& args, const OutputPaths& paths,
                                       int world_size, const std::string& command_line, const PlanOptions& shard,
                                       std::uint64_t plan_size, std::string& problem) {
  const fs::path& path = paths.results_file;
  const bool exists = fs::exists(path);
  if (exists && !args.overwrite) {
    problem = fmt::format("{}: results file exists; pass --resume to complete it or --overwrite to replace it",
                          path.string());
    return std::nullopt;
  }
  if (exists) {
    // --overwrite replaces a results file, never a file that merely has its name (the sweep file
    // itself, data of another program): the root attribute format says what the file is.
    try {
      ResultsFile::open_read_only(path).read_info();
    } catch (const std::exception& e) {
      problem = fmt::format(
          "{}: exists and is not a results file that can be read ({}); --overwrite replaces only a "
          "results file: move or remove it yourself",
          path.string(), e.what());
      return std::nullopt;
    }
    fs::remove(path);
    remove_documents(paths.documents);
  }
  RunInfo info;
  info.sweep_name = sweep.spec.name;
  info.sweep_path = sweep.spec.source_path;
  info.sweep_text = sweep.spec.source_text;
  info.plan_size = static_cast<std::int64_t>(plan_size);
  info.kernelsweep_version = build::version;
  info.git_commit = build::git_commit;
  info.started_at = iso_utc_now();
  info.world_size = world_size;
  info.host = read_host_info().hostname;
  info.command_line = command_line;
  info.shard_index = static_cast<std::int64_t>(shard.shard_index);
  info.shard_count = static_cast<std::int64_t>(shard.shard_count);
  info.where = args.plan.where;
  info.labels = parse_labels(args.labels);
  return ResultsFile::create(path, info);
}

RunOptions run_options(const RunRequest& args, const Registry& registry, const LoadedSweep& sweep,
                       const OutputPaths& paths) {
  RunOptions o;
  o.registry = &registry;
  o.plugins = sweep.plugins;
  o.python = sweep.python;
  o.sweep_text = sweep.spec.source_text;
  o.calibration_folder = calibration_folder(paths.directory);
  o.schedule = args.schedule == "static" ? Schedule::static_round_robin : Schedule::dynamic;
  o.allow_shared_gpu = args.allow_shared_gpu;
  o.check = args.check == "none"  ? CheckPolicy::none
            : args.check == "all" ? CheckPolicy::every_mode
                                  : CheckPolicy::first_mode;
  o.executable = current_executable();
  o.retry_skipped = args.retry_skipped;
  o.calibrate = calibration_mode_of(args.calibrate);
  o.exclude_slow = args.exclude_slow;
  o.sentinel_every = parse_sentinel_interval(args.sentinel_every);
  return o;
}

// Only rank 0 writes. Nothing of the failed write reached the file (store/space_reserve.h), which
// holds every batch flushed before it; the job ends, and --resume measures the rest.
[[noreturn]] void stop_for_want_of_space(MpiWorld& world, const StorageFullError& error, RunOutputs& outputs,
                                         const OutputPaths& paths, const std::string& sweep_path) {
  std::cerr << printable(fmt::format(
                   "kernelsweep: {}; {} holds the {} results stored before, the {} received since "
                   "were not stored: free space, then `kernelsweep run --resume {}` measures the rest",
                   error.what(), paths.results_file.string(), outputs.rows_in_file(), outputs.unstored(), sweep_path))
            << "\n";
  outputs.release_lock();
  world.abort(kExitFailure);
}

// One message says what the stop left: what is stored, what is left, and how to go on.
int save_interrupted_run(RunOutputs& outputs, const PlanOutcome& outcome, std::uint64_t to_measure,
                         const OutputPaths& paths, const std::string& command_line) {
  outputs.save_interrupted();
  const std::size_t measured = outputs.received();
  // The command that completes the run: the one given, with --resume where it lacked it.
  const std::string resume =
      command_line.find(" --resume") == std::string::npos ? command_line + " --resume" : command_line;
  std::cerr << printable(fmt::format(
                   "kernelsweep: interrupted ({}): {} of the {} points this run had to measure are stored in {}, {} "
                   "are left; `{}` completes the sweep (exit code {}: interrupted, resumable)",
                   outcome.interrupted, measured, to_measure - outputs.left_skipped(), paths.results_file.string(),
                   to_measure - outputs.left_skipped() - measured, resume, kExitInterrupted))
            << "\n";
  return kExitInterrupted;
}

// What became of a rank that stopped answering and of the points it had been handed.
std::string silent_rank_line(const SilentRank& silent, const std::string& sweep_path) {
  std::string line = fmt::format(
      "kernelsweep: rank {} on {} stopped answering; {} of the points it had been handed "
      "were measured by the other ranks",
      silent.rank, silent.host, silent.points_handed_on);
  if (silent.points_recorded > 0)
    line += fmt::format(", {} were recorded crashed, and `kernelsweep run --resume {}` measures them again",
                        silent.points_recorded, sweep_path);
  return line;
}

}  // namespace

int run_sweep(const RunRequest& args, Registry& registry, int* argc, char*** argv) {
  const std::string command_line = fmt::format("{}", fmt::join(std::vector<std::string>(*argv, *argv + *argc), " "));
  // From the first moment: a time limit's SIGTERM that comes while the ranks start is noted, and the
  // run stops in order as soon as every rank has joined.
  install_stop_handlers();
  MpiWorld world(argc, argv);
  world.set_collective_deadline(collective_deadline());
  const bool root = world.rank() == 0;
  // Rank 0 alone looks for the stop file (the others hear from it), so that a job of many ranks
  // does not poll a parallel filesystem from every one.
  if (root && !args.stop_file.empty()) watch_stop_file(args.stop_file);
  // Every rank reads the sweep file; rank 0 alone plans (below), and hands the other ranks their
  // points as they ask for work.
  auto sweep = load_sweep(args.plan, registry, root);
  const auto options = sweep ? sweep->plan_options() : std::nullopt;
  if (!world.all(options.has_value())) return kExitBadInput;
  const PlanOptions& shard = *options;

  const OutputPaths paths = output_paths(sweep->spec, args, shard);
  std::optional<RunOutputs> outputs;
  std::optional<WorkPlan> plan;
  std::string problem;
  if (root) {
    try {
      // The writer lock before anything that reads, replaces or makes the file: one run at a time.
      const fs::path folder = paths.results_file.parent_path();
      fs::create_directories(folder.empty() ? fs::path(".") : folder);
      WriterLock lock = WriterLock::acquire(paths.results_file, read_host_info().hostname, command_line);
      // A new file is made once the plan is known to be good.
      const bool resuming = args.resume && fs::exists(paths.results_file);
      std::optional<ResultsFile> file;
      if (resuming) {
        file = resume_with_plan(*sweep, args, paths, shard, plan, problem);
      } else {
        plan = sweep->work_plan();
        if (plan) file = new_results(*sweep, args, paths, world.size(), command_line, shard, plan->size(), problem);
      }
      if (plan && file) {
        if (resuming)
          file->add_session({iso_utc_now(), world.size(), read_host_info().hostname, command_line, build::version,
                             build::git_commit});
        // The documents in the format the plan's size calls for.
        DocumentWriter documents(
            paths.documents,
            resolve_documents_format(paths.format, plan->size(), sweep->spec.output.kernelindex_json_max_points),
            paths.shards);
        const std::string documents_format = documents.format();
        outputs.emplace(registry, std::move(*file), std::move(lock), std::move(documents), sweep->spec.protocol,
                        plan->to_measure(), args.progress_interval_s);
        outputs->set_headline({sweep->spec.name, sweep->spec.source_path, args.plan.shard, plan->size(),
                               plan->to_measure(), paths.results_file.string(), paths.documents.string(),
                               documents_format, plan->repetitions(), args.exclude_slow});
        if (plan->measured_before() > 0)
          std::cerr << fmt::format("resuming: {} of {} points already passed\n", plan->measured_before(), plan->size());
        if (args.resume) {
          const std::size_t completed = outputs->complete_pending_documents();
          if (completed > 0)
            std::cerr << fmt::format("resuming: wrote the {} documents of stored results that a stop left unwritten\n",
                                     completed);
        }
      }
    } catch (const std::exception& e) { problem = e.what(); }
    if (!problem.empty()) std::cerr << "kernelsweep: " << printable(problem) << "\n";
  }
  // Rank 0 goes on with its outputs open and no problem; a refused plan has said why already.
  if (!world.all(!root || (outputs.has_value() && problem.empty()))) return kExitBadInput;

  PlanOutcome outcome;
  try {
    outcome = measure_plan(world, root ? &*plan : nullptr, sweep->spec.protocol,
                           run_options(args, registry, *sweep, paths), root ? &*outputs : nullptr);
  } catch (const RunError& e) {
    if (root) std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
    return kExitBadInput;
  } catch (const StorageFullError& e) {
    stop_for_want_of_space(world, e, *outputs, paths, sweep->spec.source_path);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("kernelsweep: rank {}: {}\n", world.rank(), printable(e.what()));
    world.abort(kExitFailure);
  }
  int exit_code = kExitOk;
  if (root) {
    try {
      exit_code = outcome.interrupted.empty()
                      ? (outputs->finish() == 0 ? kExitOk : kExitFailure)
                      : save_interrupted_run(*outputs, outcome, plan->to_measure(), paths, command_line);
    } catch (const StorageFullError& e) { stop_for_want_of_space(world, e, *outputs, paths, sweep->spec.source_path); }
  }
  if (root && !outcome.silent_ranks.empty()) {
    // The file is finished; a silent rank would never reach the barrier, so the job ends here.
    for (const SilentRank& silent : outcome.silent_ranks)
      std::cerr << silent_rank_line(silent, sweep->spec.source_path) << "\n";
    world.abort(exit_code == kExitInterrupted ? kExitInterrupted : kExitFailure);
  }
  // Every rank ends with rank 0's verdict, so that mpirun and srun report it whichever rank they read.
  return std::stoi(world.broadcast_from_root(std::to_string(exit_code)));
}

}  // namespace ks
