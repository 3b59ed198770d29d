// `kernelsweep submit SWEEP --array N [-- SBATCH OPTIONS]`: a sweep as a Slurm job array of N shards
// (slurm/sweep.sbatch, task i measuring shard i/N, each requeued at its time limit until done) and a
// job that runs once every task has ended (afterany): it merges the shards into one results file,
// prints its status and writes its report.
#include <filesystem>
#include <iostream>
#include <ranges>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cluster/worker_process.h"
#include "common/child_process.h"
#include "common/printable.h"
#include "config/sweep_spec.h"
#include "plugins/plugins.h"
#include "run/run.h"
#include "run/sweep_loading.h"

extern char** environ;

namespace ks {
namespace {

namespace fs = std::filesystem;

// A word as a POSIX shell reads it back: unchanged when it is safe, in single quotes otherwise.
std::string shell_quoted(const std::string& word) {
  static const std::regex safe(R"([A-Za-z0-9_@%+=:,./-]+)");
  if (!word.empty() && std::regex_match(word, safe)) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string command_text(const std::vector<std::string>& argv) {
  return fmt::format("{}", fmt::join(argv | std::views::transform(shell_quoted), " "));
}

std::vector<std::string> this_environment() {
  std::vector<std::string> out;
  for (char** entry = environ; *entry; ++entry) out.emplace_back(*entry);
  return out;
}

// Runs one sbatch command; its job id (sbatch --parsable prints "ID" or "ID;CLUSTER").
std::string submitted_job(const std::vector<std::string>& argv) {
  const ChildOutput output = run_collecting(argv, this_environment());
  if (output.exit_code != 0) {
    const std::string why = output.err.empty() ? output.out : output.err;
    throw std::runtime_error(fmt::format("sbatch failed (exit code {}): {}", output.exit_code,
                                         why.substr(0, why.find_last_not_of("\n") + 1)));
  }
  const std::string id = output.out.substr(0, output.out.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error(fmt::format("sbatch printed no job id: {}", output.out));
  return id;
}

struct Jobs {
  std::vector<std::string> array, merge;  // the two sbatch command lines; merge's names ARRAY_ID
};

// Where the shards' results files are and where the merged one goes: as `run --shard --output-dir`
// names them (the sweep's output.results_file, or NAME.h5, in the output folder unless absolute).
struct ResultsPaths {
  std::string shard_pattern;  // every shard's file, as a shell pattern (quoted but for its *)
  fs::path merged;
};

ResultsPaths results_paths(const SweepSpec& spec, const fs::path& output, int shards) {
  const fs::path file =
      spec.output.results_file.empty() ? fs::path(spec.name + ".h5") : fs::path(spec.output.results_file);
  const fs::path base = file.is_absolute() ? file : output / file;
  const std::string stem = base.stem().string(), extension = base.extension().string();
  return {shell_quoted(base.parent_path().string() + "/" + stem + ".shard-") + "*" +
              shell_quoted(fmt::format("-of-{}{}", shards, extension)),
          base.parent_path() / (stem + extension)};
}

// The sbatch options of the merge job: those of the array, less `--signal`. The early signal is for
// the batch script, which traps it to stop its ranks in order; the merge job's shell has no such
// trap, and the signal would only end it before its time limit (a `--signal=B:TERM@50` under
// `--time=1` ended a merge job while it wrote its report).
std::vector<std::string> merge_job_options(const std::vector<std::string>& array_options) {
  std::vector<std::string> options;
  for (std::size_t i = 0; i < array_options.size(); ++i) {
    if (array_options[i] == "--signal") ++i;  // and its value, the next word
    else if (!array_options[i].starts_with("--signal=")) options.push_back(array_options[i]);
  }
  return options;
}

// The folder and job names follow the sweep file's name, as the batch script's results folder does.
Jobs sbatch_commands(const SubmitRequest& request, const std::string& executable, const fs::path& script,
                     const fs::path& output, const std::string& stem, const ResultsPaths& results) {
  const std::string shards = std::to_string(request.array);
  Jobs jobs;
  jobs.array = {"sbatch",
                "--parsable",
                fmt::format("--array=0-{}", request.array - 1),
                fmt::format("--job-name=ks-{}", stem),
                "--output=" + (output / "slurm-%A_%a.out").string(),
                fmt::format("--export=ALL,KERNELSWEEP={},KERNELSWEEP_SHARDS={},KERNELSWEEP_OUTPUT={}", executable,
                            shards, output.string())};
  jobs.array.insert(jobs.array.end(), request.sbatch_options.begin(), request.sbatch_options.end());
  jobs.array.push_back(script.string());
  jobs.array.push_back(request.plan.sweep_file);
  jobs.array.insert(jobs.array.end(), request.run_options.begin(), request.run_options.end());

  const std::string then = fmt::format(
      "{0} merge {1} -o {2} --overwrite && {0} status {2} && {{ {0} report {2} -o {3} || "
      "echo 'kernelsweep submit: the report could not be written; the merged file is complete' >&2; }}",
      shell_quoted(executable), results.shard_pattern, shell_quoted(results.merged.string()),
      shell_quoted((output / "report").string()));
  jobs.merge = {"sbatch",
                "--parsable",
                "--dependency=afterany:ARRAY_ID",
                "--kill-on-invalid-dep=yes",
                fmt::format("--job-name=ks-{}-merge", stem),
                "--output=" + (output / "slurm-%j-merge.out").string()};
  const std::vector<std::string> merge_options = merge_job_options(request.sbatch_options);
  jobs.merge.insert(jobs.merge.end(), merge_options.begin(), merge_options.end());
  for (const char* one : {"--nodes=1", "--ntasks=1"}) jobs.merge.push_back(one);
  jobs.merge.push_back("--wrap=" + then);
  return jobs;
}

}  // namespace

int submit_sweep(const SubmitRequest& request, Registry& registry) {
  const auto sweep = load_sweep(request.plan, registry);
  const auto points = sweep ? sweep->count() : std::nullopt;
  if (!points) return kExitBadInput;
  if (request.array < 1) {
    std::cerr << "kernelsweep submit: --array N needs N >= 1\n";
    return kExitBadInput;
  }
  const fs::path script = request.batch_script.empty() ? slurm_batch_script() : fs::path(request.batch_script);
  if (!fs::exists(script)) {
    std::cerr << printable(
        fmt::format("kernelsweep submit: no batch script {}: pass --batch-script\n", script.string()));
    return kExitBadInput;
  }
  const std::string stem = fs::path(request.plan.sweep_file).stem().string();
  const fs::path output =
      fs::absolute(request.output_directory.empty() ? fs::path("results") / stem : fs::path(request.output_directory));
  const ResultsPaths results = results_paths(sweep->spec, output, request.array);
  Jobs jobs = sbatch_commands(request, current_executable(), fs::absolute(script), output, stem, results);
  if (request.dry_run) {
    std::cout << command_text(jobs.array) << "\n" << command_text(jobs.merge) << "\n";
    return kExitOk;
  }
  fs::create_directories(output);  // Slurm opens the output files there before the jobs start
  const std::string array_id = submitted_job(jobs.array);
  for (std::string& word : jobs.merge) word = std::regex_replace(word, std::regex("ARRAY_ID"), array_id);
  const std::string merge_id = submitted_job(jobs.merge);
  std::cout << fmt::format(
      "submitted array job {} ({} tasks, shard i/{} in task i, {} points in all) and merge "
      "job {} (once every task has ended): {}\n",
      array_id, request.array, request.array, *points, merge_id, results.merged.string());
  return kExitOk;
}

}  // namespace ks
