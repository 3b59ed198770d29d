// One kernelsweep job of 64 ranks under the real mpirun, oversubscribed on whatever cores the machine
// has, sweeping the no-op kernel into a real results file: every point lands exactly once and every
// rank takes part; workers killed every second cost at most the point each was measuring (recorded
// crashed, measured again by --resume); a rank stopped mid-run is named in the log and its points are
// measured by the others. A job this large runs alone (SERIAL in tests/CMakeLists.txt): 128 processes
// on a small machine would make the other tests' ranks look silent.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/processes.h"
#include "env/environment.h"
#include "store/results_file.h"
#include "store/writer_lock.h"
#include "support/cli_runner.h"
#include "support/mpi_job.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kScaleRanks = 64;
// A few thousand points: enough for every rank to be handed some, few enough for a job of 64 ranks
// to end within a minute on two cores.
constexpr int kScalePoints = 3000;

// The no-op kernel over `points` ids, without warm-up or flush, each point timed for `rep_ms` (0: one
// call, so that what each point costs is kernelsweep's own work).
std::string scale_noop_sweep(const std::string& name, int points, int rep_ms) {
  return fmt::format(
      "name: {}\nprotocol:\n  warmup_ms: 0\n  rep_ms: {}\n  max_repeat: {}\n  flush_bytes: 0\n"
      "kernels:\n  - kernel: noop\n    grid:\n      id: {{from: 1, to: {}, step: 1}}\n",
      name, rep_ms, rep_ms > 0 ? 1000000 : 1, points);
}

// The job that sweeps `name`'s no-op points on 64 ranks into `dir` (no calibration: the tests'
// kept calibrations are of one and two ranks a node, and 64 would each measure theirs).
std::string scale_command(const fs::path& dir, const std::string& name, const std::string& environment = "",
                          int rep_ms = 0) {
  const fs::path sweep = write_sweep(dir, scale_noop_sweep(name, kScalePoints, rep_ms));
  return environment + " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
         mpirun_test_cli(kScaleRanks, fmt::format("run {} --output-dir {} --check none --calibrate off", sweep.string(),
                                                  dir.string()));
}

// Each planned point has exactly one row; the rows' statuses, counted.
std::map<std::string, int> expect_each_point_stored_once(const fs::path& results) {
  const auto rows = rows_by_point(results);
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kScalePoints)) << "points lost";
  std::map<std::string, int> statuses;
  for (const auto& [point, by_status] : rows) {
    int count = 0;
    for (const auto& [status, n] : by_status) {
      count += n;
      statuses[status] += n;
    }
    EXPECT_EQ(count, 1) << point << " stored " << count << " times";
  }
  return statuses;
}

// `kernelsweep status --json` of the file: the run ended, and no planned point lacks its row.
void expect_status_complete(const fs::path& results) {
  const auto status = run_command(fmt::format("{} status {} --json", KS_TEST_CLI, results.string()));
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto summary = nlohmann::json::parse(status.out);
  EXPECT_FALSE(summary.at("ended_at").get<std::string>().empty()) << "the run was not recorded as ended";
  EXPECT_EQ(summary.at("missing").size(), 0u) << "points without a row in `status`";
  EXPECT_EQ(summary.at("points_by_status").value("passed", 0) + summary.at("points_by_status").value("crashed", 0),
            kScalePoints)
      << summary.at("points_by_status").dump();
}

// The MPI rank of a process of the job, from its environment (Open MPI's); -1 when unknown.
int mpi_rank_of(pid_t pid) {
  const std::string environment = ks::read_process_file(pid, "environ").value_or("");
  const std::string name = "OMPI_COMM_WORLD_RANK=";
  for (std::size_t at = 0; at < environment.size(); at = environment.find('\0', at) + 1) {
    if (environment.compare(at, name.size(), name) == 0) return std::atoi(environment.c_str() + at + name.size());
    if (environment.find('\0', at) == std::string::npos) break;
  }
  return -1;
}

TEST(ScaleRun, SixtyFourRanksStoreEveryPointOnceAndEachTakesPart) {
  const fs::path dir = fresh_directory("scale_run");
  const auto run = run_command(scale_command(dir, "scale"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const fs::path results = dir / "scale.h5";

  EXPECT_EQ(expect_each_point_stored_once(results), (std::map<std::string, int>{{"passed", kScalePoints}}));
  const ResultsFile file = ResultsFile::open_read_only(results);
  std::set<int> measured_by;
  for (const StoredRun& r : file.read_runs()) measured_by.insert(r.rank);
  EXPECT_EQ(measured_by.size(), static_cast<std::size_t>(kScaleRanks)) << "ranks that measured no point";
  EXPECT_EQ(file.read_ranks().size(), static_cast<std::size_t>(kScaleRanks)) << "ranks missing from /ranks";
  expect_status_complete(results);
}

// The workers of the ranks other than rank 0 (whose worker is `writer`'s child).
std::vector<pid_t> workers_of_other_ranks(pid_t job, pid_t writer) {
  const std::vector<pid_t> of_writer = descendants(writer);
  std::vector<pid_t> workers;
  for (pid_t pid : processes_running(job, "worker"))
    if (std::find(of_writer.begin(), of_writer.end(), pid) == of_writer.end()) workers.push_back(pid);
  return workers;
}

// A worker killed (SIGKILL) every second, from the moment the lock names rank 0 to the job's end,
// each of a random rank other than 0: a worker measuring a point costs that point (recorded crashed,
// with the reason), an idle one nothing; the rank starts a fresh worker and the sweep goes on. No
// point is lost or stored twice, and --resume measures the crashed ones.
TEST(ScaleFaults, WorkersKilledEverySecondLoseNoPointAndStoreNoneTwice) {
  const fs::path dir = fresh_directory("scale_kills");
  const fs::path results = dir / "kills.h5";
  // Points of 10 ms each: the sweep takes several seconds of the machine's two cores, several kills.
  const std::string command = scale_command(dir, "kills", "", 10);
  const pid_t job = start_in_background(command + " >" + (dir / "job.log").string() + " 2>&1");
  std::mt19937 random(64);
  int killed = 0, status = 0;
  const auto started = std::chrono::steady_clock::now();
  pid_t writer = 0;
  auto next_kill = started;
  while (::waitpid(job, &status, WNOHANG) == 0) {
    ASSERT_LT(std::chrono::steady_clock::now() - started, std::chrono::minutes(5))
        << "the job did not end; its processes:\n"
        << process_table(job);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!writer && fs::exists(WriterLock::lock_path(results))) writer = writer_pid(results);
    if (!writer || std::chrono::steady_clock::now() < next_kill) continue;
    next_kill += std::chrono::seconds(1);
    const auto workers = workers_of_other_ranks(job, writer);
    if (workers.empty()) continue;
    killed += ::kill(workers[std::uniform_int_distribution<std::size_t>(0, workers.size() - 1)(random)], SIGKILL) == 0;
  }
  const std::string log = read_text(dir / "job.log");
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::cout << fmt::format("{} workers killed in {:.1f} s; job exit code {}\n", killed,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                           exit_code);
  EXPECT_GT(killed, 0) << "no worker was killed: the job ended too soon\n" << log;

  const auto statuses = expect_each_point_stored_once(results);
  EXPECT_EQ(statuses.size(), statuses.count("passed") + statuses.count("crashed")) << nlohmann::json(statuses).dump();
  const int crashed = statuses.count("crashed") ? statuses.at("crashed") : 0;
  EXPECT_LE(crashed, killed) << "more points crashed than workers were killed";
  EXPECT_EQ(exit_code, crashed > 0 ? 1 : 0) << log;
  for (const StoredRun& r : ResultsFile::open_read_only(results).read_runs())
    if (r.status == "crashed") EXPECT_NE(r.message.find("during the point"), std::string::npos) << r.message;

  const auto resumed = run_command(command + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  for (const auto& [point, by_status] : rows_by_point(results))
    EXPECT_EQ(by_status.count("passed") ? by_status.at("passed") : 0, 1) << point << " " << nlohmann::json(by_status);
  expect_status_complete(results);
}

// A rank other than 0 stopped (SIGSTOP, its worker too) part way: rank 0 names it (rank and host)
// in the log once the silence limit passes, while the job still runs; the points it held are
// measured by the other ranks, and every point is stored once, passed. The job ends without it
// (exit code 1: a rank was lost).
TEST(ScaleFaults, AStoppedRankIsNamedAndItsPointsAreMeasuredByTheOthers) {
  const fs::path dir = fresh_directory("scale_stall");
  const fs::path results = dir / "stall.h5";
  constexpr int kSilenceSeconds = 5;
  // Points of 2 ms each (about 3 s of the machine's two cores in all), and the rank stopped at the
  // first rows stored: it stops while the sweep goes on, not in the job's last moments (a rank that
  // stops once every result is in holds up the end of the job until its deadline).
  const std::string command =
      scale_command(dir, "stall", fmt::format("KERNELSWEEP_RANK_SILENCE_TIMEOUT={}", kSilenceSeconds), 2);
  const pid_t job = start_in_background(command + " >" + (dir / "job.log").string() + " 2>&1");
  ASSERT_GE(wait_for_rows(results, 1, 240), 1u) << read_text(dir / "job.log");
  const pid_t writer = writer_pid(results);
  ASSERT_GT(writer, 0) << "no writer named in the lock file";
  const pid_t stopped = stop_a_rank_other_than(job, writer, std::random_device()());
  ASSERT_GT(stopped, 0) << "no rank other than rank 0 found";
  const auto stopped_at = std::chrono::steady_clock::now();
  const int rank = mpi_rank_of(stopped);
  ASSERT_GT(rank, 0) << "the stopped process's rank is not in its environment";

  // The log, looked at while the job runs: the rank is named before the job ends.
  const std::string named = fmt::format("rank {} on {} stopped answering", rank, read_host_info().hostname);
  bool named_while_running = false;
  double named_after = -1;
  int status = 0;
  while (::waitpid(job, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - stopped_at > std::chrono::minutes(5)) {
      const std::string processes = process_table(job);
      for (pid_t pid : descendants(job)) ::kill(pid, SIGKILL);
      ::waitpid(job, nullptr, 0);
      FAIL() << "the job did not end without its stopped rank; its processes:\n"
             << processes << read_text(dir / "job.log");
    }
    if (!named_while_running && read_text(dir / "job.log").find(named) != std::string::npos) {
      named_while_running = true;
      named_after = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(stopped, SIGKILL);  // should the job have left it behind
  const std::string log = read_text(dir / "job.log");
  std::cout << fmt::format("rank {} stopped; named in the log {:.1f} s later (silence limit {} s)\n", rank, named_after,
                           kSilenceSeconds);
  for (const std::string& line : lines_of(log))
    if (line.find("were measured by the other ranks") != std::string::npos) std::cout << line << "\n";
  EXPECT_TRUE(named_while_running) << "the log did not name " << named << " while the job ran:\n" << log;
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1) << log;
  EXPECT_NE(log.find("of the points it had been handed were measured by the other ranks"), std::string::npos) << log;
  EXPECT_EQ(log.find("recorded crashed"), std::string::npos) << log;

  EXPECT_EQ(expect_each_point_stored_once(results), (std::map<std::string, int>{{"passed", kScalePoints}}));
  expect_status_complete(results);
}

}  // namespace
}  // namespace ks::testing
