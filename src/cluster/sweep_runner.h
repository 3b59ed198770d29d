#pragma once
// The sweep loop across the MPI world. Every rank drives one worker process; rank 0 also keeps the
// work queue and receives every result as it is made (non-blocking sends, no collectives inside the
// loop), passing each to a ResultSink (the store, the documents and the progress line).
// Rank 0's part is cluster/coordinator.h, every rank's cluster/participant.h, and what they say to
// each other cluster/rank_messages.h (over MPI: cluster/messaging.h).
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/calibration.h"
#include "calibration/calibration_cache.h"
#include "cluster/mpi_world.h"
#include "cluster/work_plan.h"
#include "cluster/work_queue.h"
#include "config/sweep_spec.h"
#include "env/environment.h"
#include "kernelindex/kernelindex.h"
#include "kernels/kernel.h"
#include "plan/point.h"
#include "plugins/python_modules.h"
#include "record/run_record.h"
#include "store/run_labels.h"

namespace ks {

// Who a rank is: its host and, through its worker, its GPU.
struct RankIdentity {
  int rank = 0;
  int local_rank = 0;
  int gpu_count = 0;  // GPUs the worker sees (0: this rank runs cpu implementations only)
  HostInfo host;
  GpuInfo gpu;
  std::string problem;  // why the GPU could not be used, if it could not
  // The Python worker's interpreter and packages (python, torch, triton, CUDA runtime): null when the
  // sweep has no Python implementation; {"problem": why} when the Python worker did not start.
  nlohmann::json python;
  // What its devices measurably do (calibration/): none where the run does not calibrate, or the
  // rank could not (its worker did not start, a stop came while it measured).
  std::optional<RankCalibration> calibration;
};
nlohmann::json to_json(const RankIdentity& r);
// The calibrations of the ranks that have one.
std::vector<RankCalibration> calibrations_of(const std::vector<RankIdentity>& ranks);
RankIdentity rank_identity_from_json(const nlohmann::json& j);

class ResultSink {
 public:
  virtual ~ResultSink() = default;
  virtual void on_start(const std::vector<RankIdentity>& ranks) = 0;
  // `protocol` is the resolved protocol the point was timed with (null when it was not timed);
  // `implementation` what the Python worker says of a Python implementation (null otherwise);
  // `documents` the record's kernelindex documents as its rank made them (none: made on rank 0).
  virtual void on_record(RunRecord record, const nlohmann::json& protocol, const nlohmann::json& implementation,
                         std::optional<RecordDocuments> documents) = 0;
  // Whether it takes records now: false while it is too far behind, the records then left waiting with
  // MPI (the requests for work still answered).
  virtual bool takes_records() const { return true; }
  // The labels the ranks' documents carry, where this sink takes documents made on the ranks; none:
  // the ranks make none (what they would cost a rank is wasted where no document is written).
  virtual std::optional<RunLabels> labels_of_rank_documents() const { return std::nullopt; }
  // Called often from rank 0's loop: time-based flushing and progress.
  virtual void on_tick() = 0;
  // Points that an earlier run of the file recorded `skipped` for a reason that still holds (no rank
  // has a GPU): they keep that row, and get no new one.
  virtual void on_left_skipped(std::size_t points) = 0;
  // A line for the log from a rank (a sentinel's drift: calibration/sentinel.h), the rank named in it.
  virtual void on_note(const std::string& line) { (void)line; }
};

enum class CheckPolicy { none, first_mode, every_mode };

struct RunOptions {
  const Registry* registry = nullptr;  // the kernels the plan names (which need a GPU)
  Schedule schedule = Schedule::dynamic;
  bool allow_shared_gpu = false;
  CheckPolicy check = CheckPolicy::first_mode;
  std::string executable;            // the kernelsweep binary that runs as `worker`
  std::vector<std::string> plugins;  // plugin libraries the workers load, as the rank did
  PythonSetup python;                // how the Python worker runs, and the modules it imports
  // Points whose latest row is `skipped` (WorkPlan::skipped_before) are measured again only when this
  // run can measure them (a GPU is present now), or when `retry_skipped` asks; otherwise left as they are.
  bool retry_skipped = false;
  // The sweep file's text: every rank must have read the same (the ranks compare digests of it and
  // of the protocol before they start).
  std::string sweep_text;
  // Whether each rank measures what its devices can do before its first point, so that every point
  // gets its speed of light, and the folder that keeps the figures for later runs (calibration_cache.h;
  // none: measured every time, kept nowhere).
  CalibrationMode calibrate = CalibrationMode::off;
  std::filesystem::path calibration_folder;
  // Fleet health (calibration/fleet_health.h): whether ranks more than 5% below the median of their
  // kind measure nothing (they stay in the job; their points go to the others), and how often each
  // rank checks its devices against its calibration mid-run (calibration/sentinel.h; 0: never).
  bool exclude_slow = false;
  std::chrono::duration<double> sentinel_every{0};
};

class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A rank that stopped answering (stopped, frozen, cut off): nothing heard from it for the silence
// limit, kRankSilence or KERNELSWEEP_RANK_SILENCE_TIMEOUT seconds. Ranks send a heartbeat while they
// work, so a long point is not silence.
struct SilentRank {
  int rank = 0;
  std::string host;
  std::size_t points_recorded = 0;   // its points in hand recorded `crashed` (a gang's, or none could take them)
  std::size_t points_handed_on = 0;  // its points in hand measured by the other ranks instead
};

// How long the steps all ranks take together (start-up, agreement, the end) may wait for the
// slowest: its worker's start (three attempts) and five silence limits. Past it, the job ends.
std::chrono::seconds collective_deadline();

// What measure_plan tells rank 0 beyond the results it sank.
struct PlanOutcome {
  std::vector<SilentRank> silent_ranks;  // the job cannot end with them at a barrier: it must be aborted
  // Why the run stopped before its end (a signal, the launcher gone, a rank that stopped); empty when
  // it ran to the end. Every rank has left the loop either way, so the job ends in order.
  std::string interrupted;
};

// Measures the points of `plan` not measured before across the world; `plan` and `sink` are rank 0's
// alone (the other ranks pass null: rank 0 sends each the points it measures, so that no rank but 0
// holds the plan). Throws RunError on a setup problem that every rank agrees on
// (shared GPUs, ranks that read different sweep files).
// A rank that falls silent hands the points it holds to the others (a gang's point is recorded
// `crashed`, with the reason) and the sweep goes on without it; on the other ranks, a rank 0 silent
// for five times the limit ends the run with an exception. A stop request on any rank (SIGTERM,
// SIGINT: cluster/interruption.h, whose handlers the caller installs) stops every rank: the outcome
// says why.
PlanOutcome measure_plan(const MpiWorld& world, const WorkPlan* plan, const ProtocolSpec& protocol,
                         const RunOptions& options, ResultSink* sink);

}  // namespace ks
