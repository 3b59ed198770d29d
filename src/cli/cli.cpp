#include "cli/cli.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "build_info.h"
#include "calibration/sentinel.h"
#include "cluster/worker.h"
#include "common/printable.h"
#include "kernels/kernel.h"
#include "report/commands.h"
#include "run/run.h"
#include "store/run_labels.h"

namespace ks::cli {
namespace {

void add_plugin_option(CLI::App& command, std::vector<std::string>& plugins) {
  command.add_option("--plugin", plugins,
                     "load a kernel plugin first: a library path, or a name looked up in KERNELSWEEP_PLUGIN_PATH "
                     "and the installed plugin folder (repeatable)");
}

void add_python_options(CLI::App& command, PlanRequest& args) {
  command.add_option("--python-module", args.python_modules,
                     "import a module of Python kernels first (docs/python.md; repeatable)");
  command.add_option("--python-path", args.python_path, "a folder for the import of Python modules (repeatable)");
}

void add_plan_options(CLI::App& command, PlanRequest& args) {
  command.add_option("sweep_file", args.sweep_file, "the sweep file (YAML)")->required();
  add_plugin_option(command, args.plugins);
  add_python_options(command, args);
  command.add_option("--max-points", args.max_points, "refuse plans larger than this, before expanding them")
      ->capture_default_str();
  command.add_option("--shard", args.shard,
                     "keep shard i of N (\"i/N\", 0 <= i < N): a part of the plan of about 1/N of its estimated cost");
  command.add_option("--where", args.where,
                     "keep the points that match: KEY OP VALUE[|VALUE...] joined by , or and "
                     "(keys: kernel, implementation, mode, point, parameters; as show --where)");
}

void add_label_option(CLI::App& command, std::vector<std::string>& labels, const char* what) {
  command.add_option("--label", labels,
                     fmt::format("KEY=VALUE: a label of {} (commit=3f2a1c9, branch=main), kept in the results file "
                                 "and every run document; history orders and names runs by them (repeatable)",
                                 what));
}

// The options that say how a history is read, alike in `history` and `report --history`; returned
// so that `report` can make them need --history.
std::vector<CLI::Option*> add_history_options(CLI::App& command, std::string& order, double& min_change_percent) {
  return {
      command
          .add_option("--order", order,
                      "given (the arguments' order; a folder's files by time), time, or label:KEY (by a --label "
                      "of the runs)")
          ->capture_default_str(),
      command
          .add_option("--min-change", min_change_percent, "PCT: a change of level of PCT percent or less is no step")
          ->capture_default_str()};
}

// Every --label readable, each key once: checked as the parser's own errors are, before any command
// starts (a run's ranks all stop alike).
void check_labels(const std::vector<std::string>& labels) {
  try {
    parse_labels(labels);
  } catch (const LabelError& error) { throw CLI::ValidationError(error.what()); }
}

// A rank other than the first of a job started by mpirun or srun: the launchers say so before MPI
// starts, so that a command-line error is printed once for the job rather than once per rank.
bool launched_as_another_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value && *value && std::string(value) != "0") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv, Registry& registry) {
  CLI::App app{"kernelsweep: benchmark GPU kernels over parameter grids, on any number of ranks"};
  app.set_version_flag("--version", fmt::format("kernelsweep {} (git {})", build::version, build::git_commit));
  app.require_subcommand(1);

  PlanRequest validate_args;
  auto* validate = app.add_subcommand("validate", "check a sweep file; print \"ok: N points\" or its first error");
  add_plan_options(*validate, validate_args);

  PlanRequest plan_args;
  auto* plan = app.add_subcommand("plan", "print the points a sweep file expands to");
  add_plan_options(*plan, plan_args);
  plan->add_flag("--json", plan_args.json, "print the points as a JSON array");

  PlanRequest kernels_args;
  auto* kernels = app.add_subcommand("kernels", "list the kernels: parameters, modes, implementations");
  kernels->add_flag("--json", kernels_args.json, "print as JSON");
  add_plugin_option(*kernels, kernels_args.plugins);
  add_python_options(*kernels, kernels_args);

  RunRequest run_args;
  auto* run = app.add_subcommand("run", "measure every point of a sweep (under mpirun or srun: across all ranks)");
  add_plan_options(*run, run_args.plan);
  run->add_option("--output-dir", run_args.output_directory,
                  "where results go (default: the sweep file's output.directory)");
  run->add_option("--results-file", run_args.results_file, "the HDF5 results file (default: output.results_file)");
  run->add_option("--kernelindex-format", run_args.kernelindex_format,
                  "json (a file per run), jsonl (shards with an index) or auto (json up to "
                  "output.kernelindex_json_max_points points; default: output.kernelindex_format, auto)")
      ->check(CLI::IsMember({"auto", "json", "jsonl"}));
  run->add_option("--kernelindex-compression", run_args.kernelindex_compression,
                  "jsonl shards: none, gzip or zstd (default: output.kernelindex_compression, none)")
      ->check(CLI::IsMember({"none", "gzip", "zstd"}));
  auto* resume = run->add_flag(
      "--resume", run_args.resume,
      "reopen the results file and measure only the points not yet passed (a new file when there is none)");
  run->add_flag("--overwrite", run_args.overwrite, "replace an existing results file")->excludes(resume);
  run->add_flag("--retry-skipped", run_args.retry_skipped,
                "with --resume: record the points skipped before again even where they are skipped again (by "
                "default a point skipped for want of a GPU is measured again only once a rank has one)")
      ->needs(resume);
  run->add_option("--schedule", run_args.schedule, "dynamic (ranks take work as they free up) or static (round robin)")
      ->check(CLI::IsMember({"dynamic", "static"}))
      ->capture_default_str();
  run->add_option("--check", run_args.check,
                  "self-check against the reference: none, first (first mode of each shape), all")
      ->check(CLI::IsMember({"none", "first", "all"}))
      ->capture_default_str();
  run->add_flag("--allow-shared-gpu", run_args.allow_shared_gpu, "allow more ranks than GPUs on a node");
  run->add_option("--progress-interval", run_args.progress_interval_s, "seconds between progress lines in a log")
      ->capture_default_str();
  run->add_option("--calibrate", run_args.calibrate,
                  "auto: each rank measures what its devices can do before its first point (kept in the output "
                  "folder's calibration/ and reused), so that every point gets its % of peak (docs/speed-of-light.md); "
                  "fresh: measure again; off: no calibration, no % of peak")
      ->check(CLI::IsMember({"auto", "fresh", "off"}))
      ->capture_default_str();
  run->add_flag("--exclude-slow", run_args.exclude_slow,
                "ranks more than 5% below the median of the ranks with the same device (memory or compute; 20% for a "
                "GPU's tensor-core products) measure nothing: they stay in the job, and their points go to the others "
                "(docs/speed-of-light.md)");
  run->add_option("--sentinel-every", run_args.sentinel_every,
                  "how often each rank measures its device again mid-run (10m, 90s, 1h; off): a figure more than 5% "
                  "below its calibration (20% for a tensor-core product) is logged, and the points it measures from "
                  "then on are flagged drift")
      ->check(CLI::Validator(
          [](std::string& text) {
            try {
              parse_sentinel_interval(text);
              return std::string();
            } catch (const std::exception& e) { return std::string(e.what()); }
          },
          "DURATION"))
      ->capture_default_str();
  run->add_option("--stop-file", run_args.stop_file,
                  "stop in order, as on SIGTERM, once this file exists (its first "
                  "line says why): a batch script's way to stop the ranks (docs/slurm.md)");
  add_label_option(*run, run_args.labels, "the run");

  CalibrateRequest calibrate_args;
  auto* calibrate =
      app.add_subcommand("calibrate",
                         "measure what each rank's GPU (or CPU) can do: memory bandwidth and matrix-product throughput "
                         "per dtype, beside the datasheet (under mpirun or srun: every rank at once)");
  calibrate->add_flag("--json", calibrate_args.json, "print one JSON object per rank, one per line");
  calibrate->add_flag("--fresh", calibrate_args.fresh, "measure again where a calibration is kept");
  calibrate->add_option("--output-dir", calibrate_args.output_directory,
                        "keep the calibrations in this folder's calibration/, where `run --output-dir` of the same "
                        "folder finds them (default: $KERNELSWEEP_CALIBRATION_DIR, else keep none)");
  calibrate->add_flag("--allow-shared-gpu", calibrate_args.allow_shared_gpu, "allow more ranks than GPUs on a node");

  SubmitRequest submit_args;
  auto* submit = app.add_subcommand("submit", "a sweep as a Slurm job array of N shards, and a job that merges them");
  submit->add_option("sweep_file", submit_args.plan.sweep_file, "the sweep file (YAML)")->required();
  submit->add_option("sbatch_options", submit_args.sbatch_options,
                     "after --: sbatch options for both jobs (--partition=..., --account=..., --time=...)");
  submit->add_option("--array", submit_args.array, "N: the number of shards, one array task each")->required();
  submit->add_option("--output-dir", submit_args.output_directory,
                     "where the shards, the merged file and the logs go (default: results/ and the sweep file's name)");
  submit->add_option("--batch-script", submit_args.batch_script, "the batch script (default: slurm/sweep.sbatch)");
  submit
      ->add_option("--run-option", submit_args.run_options,
                   "an option of `kernelsweep run` for every task (--run-option=--check=all; repeatable)")
      ->allow_extra_args(false);
  submit->add_flag("--dry-run", submit_args.dry_run, "print the two sbatch commands instead of running them");
  add_plugin_option(*submit, submit_args.plan.plugins);

  WorkerArguments worker_args;
  auto* worker = app.add_subcommand("worker", "internal: the process that owns a rank's GPU");
  worker->group("");  // hidden from --help
  worker->add_option("--in-fd", worker_args.in_fd);
  worker->add_option("--out-fd", worker_args.out_fd);
  worker->add_option("--local-rank", worker_args.local_rank);
  worker->add_option("--plugin", worker_args.plugins);

  std::string status_file;
  bool status_json = false;
  auto* status = app.add_subcommand("status", "what a results file holds: counts by status, points still missing");
  status->add_option("results_file", status_file, "the HDF5 results file")->required();
  status->add_flag("--json", status_json, "print as JSON");
  std::vector<std::string> status_plugins;
  add_plugin_option(*status, status_plugins);

  ShowRequest show_args;
  auto* show = app.add_subcommand("show", "the points of results files as a table: parameters, times, rates, status");
  show->add_option("files", show_args.files, "results files (HDF5)")->required();
  show->add_option("--where", show_args.where,
                   "keep the points that match: KEY OP VALUE[|VALUE...], joined by , or and");
  show->add_option("--columns", show_args.columns, "the columns to print, in order (comma-separated)")->delimiter(',');
  show->add_option("--format", show_args.format, "table, md, csv or json")
      ->check(CLI::IsMember({"table", "md", "csv", "json"}))
      ->capture_default_str();

  MergeRequest merge_args;
  auto* merge =
      app.add_subcommand("merge", "one results file from the shards, array tasks or resumed jobs of one sweep");
  merge->add_option("inputs", merge_args.inputs, "the results files to merge")->required();
  merge->add_option("-o,--output", merge_args.output, "the merged results file")->required();
  merge->add_flag("--overwrite", merge_args.overwrite, "replace an existing output file");
  add_plugin_option(*merge, merge_args.plugins);

  ReportRequest report_args;
  auto* report = app.add_subcommand("report", "an HTML and markdown report with tables and plots");
  report->add_option("files", report_args.files, "results files (HDF5); with --history, folders of them too")
      ->required();
  report->add_option("-o,--output-dir", report_args.output_directory, "where index.html and report.md go")->required();
  report->add_option("--baseline", report_args.baseline, "the implementation speed-ups are measured against");
  report->add_option("--reference", report_args.reference,
                     "the implementation each point is a fraction of (its median / the point's median)");
  report->add_option("--where", report_args.where, "keep the points that match (as show --where)");
  auto* baseline = report->get_option("--baseline");
  auto* reference = report->get_option("--reference");
  auto* history_report = report->add_flag(
      "--history", report_args.history,
      "the files (and folders of them) are runs of one sweep: the steps in each point's medians, and timelines");
  for (CLI::Option* option : add_history_options(*report, report_args.order, report_args.min_change_percent))
    option->needs(history_report);
  history_report->excludes(baseline)->excludes(reference);
  report
      ->add_option("--timelines", report_args.timelines,
                   "with --history: steps (a timeline of each point with a step) or all (of every point kept)")
      ->check(CLI::IsMember({"steps", "all"}))
      ->capture_default_str()
      ->needs(history_report);

  CompareRequest compare_args;
  auto* compare = app.add_subcommand("compare", "each point of NEW against BASE: same, faster, slower or unclear");
  compare->add_option("base", compare_args.base, "the baseline results file")->required();
  compare->add_option("new", compare_args.next, "the results file to judge")->required();
  compare->add_option("--where", compare_args.where, "keep the points that match (as show --where)");
  compare->add_option("--format", compare_args.format, "table, md or json")
      ->check(CLI::IsMember({"table", "md", "json"}))
      ->capture_default_str();
  compare->add_option("--fail-above", compare_args.fail_above_percent,
                      "exit with 1 when a point is slower by more than PCT percent (and not unclear)");
  compare
      ->add_option("--threshold", compare_args.threshold_percent,
                   "T: a point is same when its interval lies within ±T percent, faster or slower beyond it")
      ->capture_default_str();

  HistoryRequest history_args;
  auto* history = app.add_subcommand(
      "history", "many results files of one sweep as a history: the steps in each point's medians, told from noise");
  history->add_option("inputs", history_args.query.inputs, "results files, and folders of them (their .h5 files)")
      ->required();
  add_history_options(*history, history_args.query.order, history_args.query.min_change_percent);
  history->add_option("--where", history_args.query.where,
                      "keep the points that match (as show --where; keys kernel, implementation, mode, point, device "
                      "and the parameters)");
  history->add_option("--format", history_args.format, "table, md, csv or json")
      ->check(CLI::IsMember({"table", "md", "csv", "json"}))
      ->capture_default_str();
  history->add_flag("--fail-on-step", history_args.fail_on_step,
                    "exit with 1 when a point measured in the latest run is slower since its last step");

  ImportRequest import_args;
  auto* import = app.add_subcommand("import", "another tool's benchmark results into a results file and documents");
  import->add_option("tool", import_args.tool, "the tool the file comes from: liger")
      ->required()
      ->check(CLI::IsMember({"liger"}));
  import->add_option("input", import_args.input, "the tool's file (liger: its benchmark CSV)")->required();
  import->add_option("-o,--output", import_args.output, "the results file to write")->required();
  import->add_option("--documents", import_args.documents_directory,
                     "where the kernelindex documents go (default: the output's folder/kernelindex)");
  import
      ->add_option("--kernelindex-format", import_args.kernelindex_format,
                   "json (a file per run) or jsonl (shards with an index)")
      ->check(CLI::IsMember({"json", "jsonl"}))
      ->capture_default_str();
  import->add_flag("--overwrite", import_args.overwrite, "replace an existing output file");
  add_label_option(*import, import_args.labels, "the import");

  DocumentsRequest documents_args;
  auto* documents = app.add_subcommand("documents", "the kernelindex documents of a folder, one JSON object a line");
  documents->add_option("folder", documents_args.folder, "a documents folder (OUTPUT/kernelindex)")->required();
  documents->add_option("--point", documents_args.points, "only the documents of this point id (repeatable)");
  documents->add_option("--run", documents_args.runs, "only the document of this run name (repeatable)");

  try {
    app.parse(argc, argv);
    check_labels(run_args.labels);
    check_labels(import_args.labels);
  } catch (const CLI::ParseError& e) {
    // Help goes to stdout as written; an error names what was typed, shown on one terminal line.
    std::ostringstream error;
    const int code = app.exit(e, std::cout, error);
    // The first rank writes the error and gives the job its exit code; the others leave quietly with
    // 0. One that left with an error first would make mpirun kill the first rank, sometimes before
    // its message was out. mpirun and srun give the job the non-zero code of the one that has it.
    if (launched_as_another_rank()) return kExitOk;
    std::istringstream lines(error.str());
    for (std::string line; std::getline(lines, line);) std::cerr << printable(line) << "\n";
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (*validate) return validate_sweep(validate_args, registry);
    if (*plan) return print_plan(plan_args, registry);
    if (*kernels) return print_kernels(kernels_args, registry);
    if (*run) return run_sweep(run_args, registry, &argc, &argv);
    if (*calibrate) return calibrate_ranks(calibrate_args, registry, &argc, &argv);
    if (*submit) return submit_sweep(submit_args, registry);
    if (*worker) return run_worker(worker_args, registry);
    if (*status) return print_status(status_file, status_json, status_plugins, registry);
    if (*show) return show_results(show_args);
    if (*merge) return merge_results(merge_args, registry);
    if (*report) return write_report(report_args);
    if (*compare) return compare_results(compare_args);
    if (*history) return print_history(history_args);
    if (*import) return import_results(import_args);
    if (*documents) return print_documents(documents_args);
  } catch (const std::exception& e) {
    std::cerr << "kernelsweep: " << printable(e.what()) << "\n";
    return kExitFailure;
  }
  return kExitBadInput;
}

}  // namespace ks::cli
