#pragma once
// What rank 0 writes to the job's log (a Slurm output file, a terminal) besides the progress lines:
// a block at the start that says what runs where (the job, the ranks, their GPUs, the output), and
// one line for each point that does not pass, as it happens.
#include <map>
#include <string>
#include <vector>

#include "cluster/sweep_runner.h"
#include "record/run_record.h"

namespace ks {

// What the start block says of the sweep beside the ranks.
struct RunHeadline {
  std::string sweep_name, sweep_path;
  std::string shard;            // "i/N", or empty for the whole plan
  std::size_t plan_points = 0;  // measurements of the plan (of the shard): points x repetitions
  std::size_t to_measure = 0;   // measurements this run makes (the plan less those passed before)
  std::string results_file, documents_folder, documents_format;
  std::int64_t repetitions = 1;  // the protocol's: each point measured this many times
  bool exclude_slow = false;     // run --exclude-slow: slow ranks measure nothing
};

// The scheduler's word on the job: "slurm job 1234 (array job 1230, task 2), nodes node[01-02]";
// empty outside a Slurm job. `environment` maps variable names to values (SLURM_JOB_ID, ...).
std::string scheduler_line(const std::map<std::string, std::string>& environment);
// The Slurm variables scheduler_line reads, from this process's environment.
std::map<std::string, std::string> scheduler_environment();

// The start block, one fact per line.
std::string start_block(const RunHeadline& headline, const std::vector<RankIdentity>& ranks,
                        const std::string& scheduler);

// The line for a point that did not pass: status, the point, where it ran, the first line of the message.
std::string not_passed_line(const RunRecord& record);

}  // namespace ks
