// What an unwatched sweep meets on a cluster, under the real mpirun: the disk filling up mid-run,
// then --resume; a second run started on the same results file; workers that die or hang before
// they start; SIGTERM to every process of the job; a rank stopped; and all of it at random moments
// in one run (the chaos test, KS_CHAOS_SEED picks its moments). Nothing measured and stored is
// lost, and every point ends passed exactly once with exactly one document.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/processes.h"
#include "store/results_file.h"
#include "store/writer_lock.h"
#include "support/cli_runner.h"
#include "support/mpi_job.h"
#include "support/small_disk.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kExitInterruptedCode = 75;  // documented: interrupted, resumable

// `points` sleepers: each runs 1 ms when `setup_ms` is 0 (a thousand points take a few seconds on 4
// ranks), or first sleeps `setup_ms` (a job that runs long enough to be interrupted part way).
std::string sleepers_sweep(const std::string& name, int points, int setup_ms = 0) {
  return fmt::format(R"(name: {}
protocol: {{warmup_ms: 1, rep_ms: 4, max_repeat: 20, flush_bytes: 0}}
kernels:
  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {{id: {{from: 1, to: {}, step: 1}}}}
    fixed: {{{}}}
)",
                     name, points, setup_ms > 0 ? fmt::format("setup_ms: {}", setup_ms) : "run_ms: 1.0");
}

// The point id each kernelindex document of `folder` describes, with how many documents describe it.
std::map<std::string, int> documented_points(const fs::path& folder) {
  std::map<std::string, int> points;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().filename() == ".kernelsweep-space") continue;  // the space held for documents
    EXPECT_EQ(entry.path().extension(), ".json") << "a document left half-written: " << entry.path();
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    ++points[Json::parse(in).at("run").at("spec").at("sourceNative").at("pointId").get<std::string>()];
  }
  return points;
}

// Each of the `points` of the sweep stored once, passed.
void expect_each_point_passed_once(const fs::path& results, std::size_t points) {
  const auto rows = rows_by_point(results);
  EXPECT_EQ(rows.size(), points);
  for (const auto& [point, statuses] : rows) EXPECT_EQ(statuses, (std::map<std::string, int>{{"passed", 1}})) << point;
}

// The sweep's `command` run again with --resume completes it: each of its `points` passed once.
void expect_resume_completes(const std::string& command, const fs::path& results, std::size_t points) {
  const auto resumed = run_command(command + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  expect_each_point_passed_once(results, points);
}

TEST(DiskFull, StopsWithEveryStoredRowReadableThenResumeCompletesEachPointOnce) {
  const fs::path dir = fresh_directory("disk_full");
  std::string why;
  const auto disk = SmallDisk::make(dir / "disk", 64, why);
  if (!disk) GTEST_SKIP() << why;
  constexpr int kPoints = 1000;
  const fs::path sweep = write_sweep(dir, sleepers_sweep("full", kPoints));
  const fs::path out = disk->path() / "out";
  const fs::path results = out / "full.h5", documents = out / "kernelindex";
  const std::string command = mpirun_test_cli(4, fmt::format("run {} --output-dir {}", sweep.string(), out.string()));

  // What is left holds the space the results file reserves ahead (32 MiB) and about two hundred
  // documents: the disk fills a fifth of the way through the sweep.
  disk->fill((32 + 6) << 20);
  const auto stopped = run_command(command);
  EXPECT_NE(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("--resume"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find(results.string() + " holds the"), std::string::npos) << stopped.err;

  // The file reads, through the library and through `status`, and holds part of the plan.
  const auto status = run_command(fmt::format("{} status {}", KS_TEST_CLI, results.string()));
  EXPECT_EQ(status.exit_code, 0) << status.err;
  const auto stored = rows_by_point(results);
  EXPECT_GT(stored.size(), 0u) << stopped.err;
  EXPECT_LT(stored.size(), static_cast<std::size_t>(kPoints)) << "the disk never filled: " << stopped.err;
  // A document for every row and a row for every document: documents follow their rows.
  const auto documented = documented_points(documents);
  EXPECT_EQ(documented.size(), stored.size());
  for (const auto& [point, count] : documented)
    EXPECT_TRUE(stored.contains(point)) << point << " has a document but no row";

  disk->empty();
  const auto resumed = run_command(command + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto rows = rows_by_point(results);
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kPoints));
  for (const auto& [point, statuses] : rows) {
    EXPECT_EQ(statuses.size(), 1u) << point;
    EXPECT_EQ(statuses.begin()->first, "passed") << point;
    EXPECT_EQ(statuses.begin()->second, 1) << point << " stored twice";
  }
  const auto all_documented = documented_points(documents);
  EXPECT_EQ(all_documented.size(), static_cast<std::size_t>(kPoints));
  for (const auto& [point, count] : all_documented) EXPECT_EQ(count, 1) << point << " documented twice";
}

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

TEST(TwoWriters, TheSecondRunIsRefusedWithHdf5FileLockingOff) {
  const fs::path dir = fresh_directory("two_writers");
  // 48 points of 1 s on 2 ranks: the first run writes for about 24 s, several times what the three
  // refused runs take to start under mpirun on a loaded 2-core machine (0.3 s points were too few).
  const fs::path sweep = write_sweep(dir, sleepers_sweep("shared", 48, 1000));
  const fs::path results = dir / "out" / "shared.h5";
  // HDF5's own lock off for both, as users set it on filesystems without flock.
  const std::string command =
      "HDF5_USE_FILE_LOCKING=FALSE OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
      mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), (dir / "out").string()));
  const pid_t first = start_in_background(command + " >" + (dir / "first.log").string() + " 2>&1");
  for (int i = 0; i < 300 && !fs::exists(WriterLock::lock_path(results)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(WriterLock::lock_path(results))) << "the first run never took its lock";

  for (const char* option : {"", " --resume", " --overwrite"}) {
    const auto second = run_command(command + option);
    EXPECT_EQ(second.exit_code, 2) << option << "\n" << second.err;
    EXPECT_NE(second.err.find("is being written by another kernelsweep run"), std::string::npos) << option << "\n"
                                                                                                 << second.err;
    EXPECT_NE(second.err.find("(host " + this_host() + ", pid "), std::string::npos)
        << "the message names the writer: " << second.err;
  }
  ASSERT_EQ(::waitpid(first, nullptr, WNOHANG), 0)
      << "the first run ended before the second ones were tried: make it longer";
  const int first_exit = exit_code_of(first);
  ASSERT_EQ(first_exit, 0) << read_text(dir / "first.log");
  expect_each_point_passed_once(results, 48);
  EXPECT_FALSE(fs::exists(WriterLock::lock_path(results))) << "the lock outlived its run";
}

TEST(TwoWriters, ALockLeftByAKilledRunIsTakenOver) {
  const fs::path dir = fresh_directory("stale_lock");
  const fs::path sweep = write_sweep(dir, sleepers_sweep("stale", 8));
  const fs::path results = dir / "out" / "stale.h5";
  fs::create_directories(results.parent_path());
  // The lock file of a run on this host whose process is gone (a pid past any live one).
  write_file(WriterLock::lock_path(results),
             R"({"host":")" +
                 read_text("/proc/sys/kernel/hostname").substr(0, read_text("/proc/sys/kernel/hostname").find('\n')) +
                 R"(","pid":2147483646,"started_at":"2026-01-01T00:00:00.000Z","command_line":"killed"})");
  const auto run =
      run_command(mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), (dir / "out").string())));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(rows_by_point(results).size(), 8u);
  EXPECT_FALSE(fs::exists(WriterLock::lock_path(results)));
}

// The sweep's workers, started by `environment` (KS_TEST_WORKER_START..., see
// tests/support/main_with_test_kernels.cpp): the result of the run.
CommandOutput run_with_worker_starts(const fs::path& dir, const std::string& name, int points,
                                     const std::string& environment) {
  const fs::path sweep = write_sweep(dir, sleepers_sweep(name, points));
  return run_command(
      fmt::format("{} KS_TEST_WORKER_START_COUNT={} {}", environment, (dir / "starts").string(),
                  mpirun_test_cli(4, fmt::format("run {} --output-dir {}", sweep.string(), dir.string()))));
}

TEST(WorkerStart, AWorkerThatDiesBeforeItsHelloIsStartedAgainAndCostsNothing) {
  const fs::path dir = fresh_directory("worker_dies_at_start");
  const auto run = run_with_worker_starts(dir, "dies", 24, "KS_TEST_WORKER_START=die KS_TEST_WORKER_START_TIMES=2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expect_each_point_passed_once(dir / "dies.h5", 24);
  EXPECT_GE(read_text(dir / "starts").size(), 6u) << "fewer worker starts than 4 ranks and 2 failures";
}

TEST(WorkerStart, AWorkerThatNeverStartsCostsOnlyItsPointsWithTheReason) {
  const fs::path dir = fresh_directory("worker_never_starts");
  const auto run =
      run_with_worker_starts(dir, "never", 6, "KS_TEST_WORKER_START=die KS_TEST_WORKER_START_TIMES=100000");
  EXPECT_EQ(run.exit_code, 1) << "points that did not pass, a job that ended: " << run.err;
  const ResultsFile file = ResultsFile::open_read_only(dir / "never.h5");
  const auto runs = file.read_runs();
  EXPECT_EQ(runs.size(), 6u);
  for (const StoredRun& r : runs) {
    EXPECT_EQ(r.status, "crashed") << r.point_id;
    EXPECT_NE(r.message.find("did not start in 3 attempts"), std::string::npos) << r.message;
  }
}

TEST(WorkerStart, AWorkerThatHangsBeforeItsHelloIsKilledAtItsDeadline) {
  const fs::path dir = fresh_directory("worker_hangs_at_start");
  const auto run = run_with_worker_starts(
      dir, "hangs", 12, "KERNELSWEEP_WORKER_START_TIMEOUT=2 KS_TEST_WORKER_START=stall KS_TEST_WORKER_START_TIMES=1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expect_each_point_passed_once(dir / "hangs.h5", 12);
}

// A sweep of slow sleepers in the background under mpirun, writing into a fresh folder; `command`
// runs it again (with --resume, say).
struct SlowSweep {
  fs::path dir, results;
  std::string command;
  pid_t job = -1;
  std::string log() const { return read_text(dir / "job.log"); }
};

SlowSweep start_slow_sweep(const std::string& name, int points, int setup_ms, int ranks,
                           const std::string& environment = "") {
  SlowSweep sweep;
  sweep.dir = fresh_directory(name);
  const fs::path file = write_sweep(sweep.dir, sleepers_sweep(name, points, setup_ms));
  sweep.results = sweep.dir / (name + ".h5");
  sweep.command = environment + " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                  mpirun_test_cli(ranks, fmt::format("run {} --output-dir {}", file.string(), sweep.dir.string()));
  sweep.job = start_in_background(sweep.command + " >" + (sweep.dir / "job.log").string() + " 2>&1");
  return sweep;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

// A signal that reaches one rank only (a user's kill, a node shutting down) stops the whole run as
// one that reaches every rank does: one message, exit code 75 (interrupted, resumable) from the job,
// no abort, no process of the job left behind; --resume completes the sweep.
class OneRankSignalled : public ::testing::TestWithParam<bool> {};  // true: rank 0, false: another rank

TEST_P(OneRankSignalled, StopsEveryRankWithOneMessageAndTheResumableExitCode) {
  const bool rank_zero = GetParam();
  const SlowSweep sweep = start_slow_sweep(rank_zero ? "sigterm_rank0" : "sigterm_rank1", 30, 500, 3);
  ASSERT_GE(wait_for_rows(sweep.results, 3), 3u) << sweep.log();
  const pid_t root = writer_pid(sweep.results);
  std::map<pid_t, std::string> processes;
  for (pid_t pid : descendants(sweep.job)) processes[pid] = command_line_of(pid);
  pid_t target = 0;
  for (pid_t pid : processes_running(sweep.job, "run"))
    if ((pid == root) == rank_zero) target = pid;
  ASSERT_GT(target, 0) << "no such rank found";
  ::kill(target, SIGTERM);
  EXPECT_EQ(exit_code_of(sweep.job), kExitInterruptedCode) << sweep.log();
  const std::string log = sweep.log();
  EXPECT_EQ(occurrences(log, "kernelsweep: interrupted (SIGTERM"), rank_zero ? 1u : 0u) << log;
  EXPECT_EQ(occurrences(log, "kernelsweep: interrupted ("), 1u) << log;
  EXPECT_NE(log.find("--resume` completes the sweep"), std::string::npos) << log;
  EXPECT_EQ(log.find("MPI_ABORT"), std::string::npos) << log;
  for (const auto& [pid, command] : processes)
    EXPECT_NE(command_line_of(pid), command) << "process " << pid << " of the job is still running: " << command;

  const auto stopped = rows_by_point(sweep.results);
  ASSERT_LT(stopped.size(), 30u) << "the job ended before the signal";
  for (const auto& [point, statuses] : stopped)
    EXPECT_EQ(statuses, (std::map<std::string, int>{{"passed", 1}})) << point << ": " << log;
  expect_resume_completes(sweep.command, sweep.results, 30);
}

INSTANTIATE_TEST_SUITE_P(Ranks, OneRankSignalled, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "rank0" : "another_rank"; });

TEST(StopSignals, SigtermToEveryProcessOfTheJobRecordsNoPointCrashed) {
  // Points of half a second on 3 ranks: SIGTERM lands while every worker is inside a point.
  const SlowSweep sweep = start_slow_sweep("sigterm_everyone", 30, 500, 3);
  const fs::path& results = sweep.results;
  const std::string& command = sweep.command;
  const pid_t job = sweep.job;
  const std::uint64_t stored = wait_for_rows(results, 3);
  ASSERT_GE(stored, 3u) << sweep.log();
  // As a scheduler ends a job step: SIGTERM to every process of it, in no set order. The workers
  // get theirs first here, the ranks a moment later: the order in which a rank would see its
  // worker die before it sees its own stop request.
  const std::vector<pid_t> processes = descendants(job);
  const auto is_worker = [](pid_t pid) {
    return command_line_of(pid).find(std::string("worker\0", 7)) != std::string::npos;
  };
  for (pid_t pid : processes)
    if (is_worker(pid)) ::kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (pid_t pid : processes) ::kill(pid, SIGTERM);
  exit_code_of(job);
  EXPECT_EQ(occurrences(sweep.log(), "kernelsweep: interrupted (SIGTERM)"), 1u) << sweep.log();
  EXPECT_EQ(sweep.log().find("MPI_ABORT"), std::string::npos) << sweep.log();
  const auto stopped = rows_by_point(results);
  ASSERT_LT(stopped.size(), 30u) << "the job ended before the signal";
  for (const auto& [point, statuses] : stopped)
    EXPECT_EQ(statuses, (std::map<std::string, int>{{"passed", 1}})) << point << ": " << sweep.log();

  expect_resume_completes(command, results, 30);
}

// --stop-file: what a batch script uses instead of signalling the job step. Its appearance stops the
// run as SIGTERM does, its first line is the reason given, and --resume completes the sweep.
TEST(StopFile, ItsAppearanceStopsEveryRankInOrderWithItsReason) {
  const fs::path dir = fresh_directory("stop_file");
  const fs::path stop = dir / "stop-now";
  const fs::path file = write_sweep(dir, sleepers_sweep("stop_file", 30, 500));
  const fs::path results = dir / "stop_file.h5";
  const std::string command = " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                              mpirun_test_cli(3, fmt::format("run {} --output-dir {} --stop-file {}", file.string(),
                                                             dir.string(), stop.string()));
  const pid_t job = start_in_background(command + " >" + (dir / "job.log").string() + " 2>&1");
  ASSERT_GE(wait_for_rows(results, 3), 3u) << read_text(dir / "job.log");
  write_file(stop, "the time limit is near\n");
  EXPECT_EQ(exit_code_of(job), kExitInterruptedCode) << read_text(dir / "job.log");
  const std::string log = read_text(dir / "job.log");
  EXPECT_EQ(occurrences(log, "kernelsweep: interrupted (the time limit is near): "), 1u) << log;
  EXPECT_EQ(log.find("MPI_ABORT"), std::string::npos) << log;
  const auto stopped = rows_by_point(results);
  ASSERT_LT(stopped.size(), 30u) << "the job ended before the stop file appeared";

  fs::remove(stop);
  expect_resume_completes(command, results, 30);
}

TEST(SilentRank, AStoppedRanksPointsAreMeasuredByTheOthersAndTheSweepEnds) {
  // 60 points of 0.2 s on 4 ranks (about 4 s): one rank is stopped (SIGSTOP) part way.
  const auto started = std::chrono::steady_clock::now();
  const SlowSweep sweep = start_slow_sweep("silent_rank", 60, 200, 4, "KERNELSWEEP_RANK_SILENCE_TIMEOUT=2");
  const fs::path& results = sweep.results;
  const std::string& command = sweep.command;
  const pid_t job = sweep.job;
  const std::uint64_t stored = wait_for_rows(results, 4);
  ASSERT_GE(stored, 4u) << sweep.log();
  // Rank 0 holds the writer lock; stop another rank (and its worker).
  const pid_t writer = writer_pid(results);
  ASSERT_GT(writer, 0) << "no writer named in the lock file";
  const pid_t stopped = stop_a_rank_other_than(job, writer);
  ASSERT_GT(stopped, 0) << "no rank other than rank 0 found";
  const int exit_code = exit_code_of(job);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ::kill(stopped, SIGKILL);  // should the job have left it behind
  EXPECT_EQ(exit_code, 1) << sweep.log();
  EXPECT_LT(seconds, 60) << "the job did not end without its stopped rank";
  EXPECT_NE(sweep.log().find("stopped answering"), std::string::npos) << sweep.log();
  EXPECT_NE(sweep.log().find("were measured by the other ranks"), std::string::npos) << sweep.log();

  // Every point is in the file once, passed: the points the stopped rank held were measured by the
  // others, and nothing is left for --resume.
  expect_each_point_passed_once(results, 60);
  const auto resumed = run_command(command + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  expect_each_point_passed_once(results, 60);
}

// A 4-rank sweep of 300 points during which, at random moments, workers are killed (at start-up
// too: a fresh worker is as likely a target as a busy one), one rank is stopped and the disk fills
// once; then --resume, as often as it takes, without chaos. Every point ends passed exactly once,
// every document has its row, nothing hangs.
TEST(Chaos, EveryPointEndsPassedOnceWhateverDiesStopsOrFills) {
  const char* seed_text = std::getenv("KS_CHAOS_SEED");
  const unsigned seed = seed_text ? static_cast<unsigned>(std::atol(seed_text)) : 1;
  std::mt19937 random(seed);
  const fs::path dir = fresh_directory("chaos");
  std::string why;
  const auto disk = SmallDisk::make(dir / "disk", 96, why);
  if (!disk) GTEST_SKIP() << why;
  constexpr int kPoints = 300;
  const fs::path sweep = write_sweep(dir, sleepers_sweep("chaos", kPoints, 40));
  const fs::path out = disk->path() / "out", results = out / "chaos.h5";
  const std::string command =
      "KERNELSWEEP_RANK_SILENCE_TIMEOUT=3 KERNELSWEEP_WORKER_START_TIMEOUT=5 OMPI_ALLOW_RUN_AS_ROOT=1 "
      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
      mpirun_test_cli(4, fmt::format("run {} --output-dir {}", sweep.string(), out.string())) + " >>" +
      (dir / "job.log").string() + " 2>&1";

  const pid_t job = start_in_background(command);
  const auto started = std::chrono::steady_clock::now();
  const auto since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const double stop_rank_at = std::uniform_real_distribution<double>(0.3, 2.0)(random);
  const double fill_disk_at = std::uniform_real_distribution<double>(0.3, 3.0)(random);
  bool rank_stopped = false, disk_filled = false;
  int workers_killed = 0;
  std::set<pid_t> seen;
  int status = 0;
  bool hung = false;
  std::string hung_processes;
  while (::waitpid(job, &status, WNOHANG) == 0) {
    if (since_start() > 120) {
      hung = true;
      hung_processes = process_table(job);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 400)(random)));
    for (pid_t pid : descendants(job)) seen.insert(pid);
    const auto workers = processes_running(job, "worker");
    if (!workers.empty() && std::uniform_int_distribution<int>(0, 2)(random) == 0) {
      ::kill(workers[std::uniform_int_distribution<std::size_t>(0, workers.size() - 1)(random)], SIGKILL);
      ++workers_killed;
    }
    if (!rank_stopped && since_start() > stop_rank_at && fs::exists(WriterLock::lock_path(results))) {
      // Until the lock names the writer, the writer is unknown: nobody is stopped yet.
      const pid_t writer = writer_pid(results);
      rank_stopped = writer > 0 && stop_a_rank_other_than(job, writer) > 0;
    }
    if (!disk_filled && since_start() > fill_disk_at) {
      disk->fill(0);
      disk_filled = true;
    }
  }
  for (pid_t pid : seen) ::kill(pid, SIGKILL);  // a stopped rank the job left behind
  if (hung) ::waitpid(job, nullptr, 0);
  ASSERT_FALSE(hung)
      << fmt::format(
             "the job under chaos did not end within 120 s (seed {}: a rank {}stopped, the disk {}filled, "
             "{} workers killed); its processes then:\n{}",
             seed, rank_stopped ? "" : "not ", disk_filled ? "" : "not ", workers_killed, hung_processes)
      << read_text(dir / "job.log");
  std::cout << fmt::format("chaos seed {}: {} workers killed, a rank {}stopped, the disk {}filled, exit {}\n", seed,
                           workers_killed, rank_stopped ? "" : "not ", disk_filled ? "" : "not ",
                           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));

  disk->empty();
  int resumes = 0, exit_code = 1;
  while (exit_code != 0 && resumes < 5) {
    exit_code = run_with_deadline(command + " --resume", 120);
    ++resumes;
    ASSERT_NE(exit_code, -1) << "a resume hung\n" << read_text(dir / "job.log");
  }
  ASSERT_EQ(exit_code, 0) << read_text(dir / "job.log");

  const auto rows = rows_by_point(results);
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kPoints));
  std::size_t total_rows = 0;
  for (const auto& [point, statuses] : rows) {
    EXPECT_EQ(statuses.count("passed") ? statuses.at("passed") : 0, 1) << point << " " << Json(statuses).dump();
    for (const auto& [status_name, count] : statuses) total_rows += count;
  }
  const auto documented = documented_points(out / "kernelindex");
  std::size_t documents = 0;
  for (const auto& [point, count] : documented) {
    EXPECT_TRUE(rows.contains(point)) << point << " has a document but no row";
    documents += count;
  }
  EXPECT_EQ(documents, total_rows) << "one document per row";
  std::cout << fmt::format("chaos seed {}: {} resumes, {} rows, {} documents, {} points passed exactly once\n", seed,
                           resumes, total_rows, documents,
                           std::count_if(rows.begin(), rows.end(), [](const auto& entry) {
                             return entry.second.count("passed") && entry.second.at("passed") == 1;
                           }));
}

}  // namespace
}  // namespace ks::testing
