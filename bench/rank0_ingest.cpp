// How many records rank 0 takes in per second, and where its time goes. Rank 0 runs the run's own
// coordinator (cluster/coordinator.h) over the run's own MPI messages (cluster/messaging.h) into the
// run's own store (run/outputs.h: the results file and the kernelindex documents); the other ranks are
// load generators that speak the same protocol: each asks for work as `--simulated` GPUs would (one
// request in flight per simulated GPU), and sends for every point it is handed the record a measuring
// rank makes (make_record, with `--samples` raw samples), paced so that all of them together offer
// `--rate` records per second (0: as fast as they can).
//   mpirun -np RANKS --oversubscribe bench_rank0_ingest [--points N] [--rate R] [--samples S]
//       [--simulated K] [--documents on|rank0|off] [--dir FOLDER]
// --documents on: the generators make each record's documents and send them with it, as measuring
// ranks do; rank0: rank 0 makes them all (as for the records it makes itself); off: the rows alone
// (the results file as the run writes it, with fixed citations), what rank 0 costs without the
// documents. Prints one line of figures from rank 0.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cluster/coordinator.h"
#include "cluster/messaging.h"
#include "cluster/mpi_world.h"
#include "cluster/point_record.h"
#include "common/thread_cpu.h"
#include "config/parse.h"
#include "env/environment.h"
#include "kernelindex/run_documents.h"
#include "measure/protocol.h"
#include "plan/plan.h"
#include "plan/point_enumerator.h"
#include "run/outputs.h"
#include "support/kernels.h"
#include "support/measured_record.h"

namespace ks {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Options {
  std::size_t points = 100'000;
  double rate = 0;  // records/s offered by all generators together; 0: unpaced
  std::size_t samples = 0;
  int simulated = 8;             // requests in flight per generator rank
  std::string documents = "on";  // on (made on the ranks), rank0, off
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "kernelsweep-rank0-ingest";
};

std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i], value = argv[i + 1];
    if (arg == "--points") o.points = std::stoul(value);
    else if (arg == "--rate") o.rate = std::stod(value);
    else if (arg == "--samples") o.samples = std::stoul(value);
    else if (arg == "--simulated") o.simulated = std::max(1, std::stoi(value));
    else if (arg == "--documents" && (value == "on" || value == "rank0" || value == "off")) o.documents = value;
    else if (arg == "--dir") o.dir = value;
    else return std::nullopt;
  }
  if (argc % 2 == 0) return std::nullopt;
  return o;
}

std::string sweep_text(std::size_t points) {
  return fmt::format(
      "name: ingest\nkernels: [{{kernel: rms_norm, implementations: [cpu], modes: [forward],\n"
      "           grid: {{tokens: {{from: 1, to: {}, step: 1}}, hidden: [64]}}}}]\n",
      points);
}

// The plan as rank 0 of a run holds it.
struct Plans {
  SweepSpec spec;
  PointEnumerator points;
  WorkPlan work;

  explicit Plans(std::size_t count)
      : spec(parse_sweep_text(sweep_text(count), "ingest.yaml", testing::builtin_registry())),
        points(spec, testing::builtin_registry()),
        work(testing::builtin_registry(), [this](const PointSource& source) { return points.group_at(source); }) {
    for_each_point(points, spec, testing::builtin_registry(), PlanOptions{}, [this](Point& point, std::size_t group) {
      work.add(point, group);
      return true;
    });
    work.seal();
  }
};

// Rank 0's link, with the CPU time its receives took (the probe, the copy out of MPI, the decode of
// a record) counted apart for those that brought a result.
class TimedLink final : public CoordinatorLink {
 public:
  std::optional<FromRank> receive(bool results) override {
    const double start = thread_cpu_seconds();
    auto message = link_.receive(results);
    const double spent = thread_cpu_seconds() - start;
    if (message && message->kind == FromRank::Kind::result) {
      result_s += spent;
      if (!first_result) first_result = Clock::now();
    } else {
      other_s += spent;
    }
    return message;
  }
  void answer(int rank, const std::vector<Assigned>& points) override {
    ThreadCpuSpan time(other_s);
    link_.answer(rank, points);
  }
  void tell_stop(int rank) override { link_.tell_stop(rank); }
  void tell_still_parked(int rank) override { link_.tell_still_parked(rank); }

  double result_s = 0, other_s = 0;
  std::optional<Clock::time_point> first_result;

 private:
  MpiCoordinatorLink link_;
};

// --documents off: the rows alone, in the run's batches, citing fixed digests.
class RowsOnly final : public ResultSink {
 public:
  explicit RowsOnly(ResultsFile file) : file_(std::move(file)) {}
  void on_start(const std::vector<RankIdentity>&) override {}
  void on_record(RunRecord record, const nlohmann::json&, const nlohmann::json&,
                 std::optional<RecordDocuments>) override {
    batch_.emplace_back(std::move(record), Citations{"sha256:p", "sha256:e", "sha256:w", "sha256:i"});
    if (batch_.size() >= 256) write();
  }
  void on_tick() override {}
  void on_left_skipped(std::size_t) override {}
  void finish() {
    write();
    file_.finish("2026-12-01T00:00:00.000Z");
  }
  double rows_s = 0;

 private:
  void write() {
    ThreadCpuSpan time(rows_s);
    if (!batch_.empty()) file_.append(batch_);
    file_.flush();
    batch_.clear();
  }
  ResultsFile file_;
  std::vector<StoredRun> batch_;
};

// The sink as the coordinator sees it: the longest any one of its calls held the serving loop (while
// it runs, no request for work is answered and no record taken in).
class TimedSink final : public ResultSink {
 public:
  explicit TimedSink(ResultSink& sink) : sink_(sink) {}
  void on_start(const std::vector<RankIdentity>& ranks) override { sink_.on_start(ranks); }
  void on_record(RunRecord record, const nlohmann::json& protocol, const nlohmann::json& implementation,
                 std::optional<RecordDocuments> documents) override {
    const auto start = Clock::now();
    sink_.on_record(std::move(record), protocol, implementation, std::move(documents));
    longest = std::max(longest, Clock::now() - start);
  }
  void on_tick() override {
    const auto start = Clock::now();
    sink_.on_tick();
    longest = std::max(longest, Clock::now() - start);
  }
  void on_left_skipped(std::size_t points) override { sink_.on_left_skipped(points); }
  bool takes_records() const override { return sink_.takes_records(); }
  Clock::duration longest{};

 private:
  ResultSink& sink_;
};

std::vector<RankIdentity> identities(int ranks) {
  std::vector<RankIdentity> out(static_cast<std::size_t>(ranks));
  const HostInfo host = read_host_info();
  for (int rank = 0; rank < ranks; ++rank) {
    out[rank].rank = rank;
    out[rank].host = host;
  }
  return out;
}

RunInfo run_info(const Options& o) {
  RunInfo info;
  info.sweep_name = "ingest";
  info.sweep_path = "ingest.yaml";
  info.sweep_text = sweep_text(o.points);
  info.plan_size = static_cast<std::int64_t>(o.points);
  info.kernelsweep_version = "bench";
  info.started_at = "2026-12-01T00:00:00.000Z";
  info.host = "bench";
  return info;
}

double peak_rss_mb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void run_root(const MpiWorld& world, const Options& o) {
  std::filesystem::remove_all(o.dir);
  std::filesystem::create_directories(o.dir);
  const Registry& registry = testing::builtin_registry();
  Plans plans(o.points);
  RunOptions options;
  options.registry = &registry;
  options.check = CheckPolicy::none;
  const auto ranks = identities(world.size());
  const auto results = o.dir / "ingest.h5";
  ResultsFile file = ResultsFile::create(results, run_info(o));
  std::optional<RunOutputs> outputs;
  std::optional<RowsOnly> rows_only;
  ResultSink* sink = nullptr;
  if (o.documents != "off") {
    WriterLock lock = WriterLock::acquire(results, "bench", "bench_rank0_ingest");
    outputs.emplace(registry, std::move(file), std::move(lock), DocumentWriter(o.dir / "kernelindex", "jsonl"),
                    plans.spec.protocol, o.points, 3600.0);
    sink = &*outputs;
  } else {
    sink = &rows_only.emplace(std::move(file));
  }
  TimedSink timed_sink(*sink);
  timed_sink.on_start(ranks);
  TimedLink link;
  GangCommunicators gangs;
  Coordinator coordinator(plans.work, options, ranks, link, timed_sink, gangs);
  coordinator.start({});
  const double loop_start = thread_cpu_seconds();
  PollInterval interval(200us, kIdleLongestLook);
  while (!coordinator.finished()) {
    const bool found = coordinator.serve();
    if (!found) std::this_thread::sleep_for(interval.next());
    interval.after_look(found);
  }
  const double loop_s = thread_cpu_seconds() - loop_start;
  const auto received = Clock::now();
  double documents_s = 0, rows_s = 0;
  std::size_t made_here = 0;
  if (outputs) {
    outputs->finish();
    documents_s = outputs->stage_times().documents_s;
    rows_s = outputs->stage_times().rows_s;
    made_here = outputs->stage_times().documents_made;
  } else {
    rows_only->finish();
    rows_s = rows_only->rows_s;
  }
  const auto stored = Clock::now();
  const auto start = link.first_result.value_or(received);
  const double receive_s = std::chrono::duration<double>(received - start).count();
  const double store_s = std::chrono::duration<double>(stored - start).count();
  const double n = static_cast<double>(o.points);
  const double sample_mb = n * static_cast<double>(o.samples) * sizeof(double) / 1e6;
  const double process_cpu_s = [] {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  }();
  std::printf(
      "ranks %d  simulated %d  offered %s  samples %zu  documents %s\n"
      "  received %.0f records/s (all in %.2f s), stored %.0f records/s (%.2f s), raw samples %.1f MB/s stored\n"
      "  rank 0 CPU per record (us): receive+decode %.1f, results file %.1f, documents %.1f, serving loop (main "
      "thread, all of it) %.1f; process CPU %.1f s\n"
      "  longest hold of the serving loop by the store %.1f ms; peak RSS %.0f MB; documents made on rank 0: %zu\n",
      world.size(), o.simulated, o.rate > 0 ? fmt::format("{:.0f} records/s", o.rate).c_str() : "unpaced", o.samples,
      o.documents.c_str(), n / receive_s, receive_s, n / store_s, store_s, sample_mb / store_s, link.result_s / n * 1e6,
      rows_s / n * 1e6, documents_s / n * 1e6, loop_s / n * 1e6, process_cpu_s,
      std::chrono::duration<double, std::milli>(timed_sink.longest).count(), peak_rss_mb(), made_here);
  std::fflush(stdout);
}

// A generator rank: asks for work as `simulated` GPUs would, and sends each point's record at its
// share of the offered rate.
void run_generator(const MpiWorld& world, const Options& o) {
  ParticipantLink link;
  RankIdentity me;
  me.rank = world.rank();
  me.host = read_host_info();
  MeasureResult result;
  result.record = testing::cold_gpu_record();
  result.record.status = "passed";
  result.record.samples_ns.resize(o.samples);
  for (std::size_t i = 0; i < o.samples; ++i) result.record.samples_ns[i] = 1000.0 + static_cast<double>(i % 17);
  result.protocol = protocol_to_json(resolve_protocol(ProtocolSpec{}, Backend::cpu));
  // --documents on: each record's documents made here, as a measuring rank makes them.
  std::optional<RunDocuments> documents;
  if (o.documents == "on") {
    const Registry& registry = testing::builtin_registry();
    documents.emplace(registry, parse_sweep_text(sweep_text(o.points), "ingest.yaml", registry).protocol, RunLabels{});
  }
  const double share = o.rate > 0 ? o.rate / (world.size() - 1) : 0;
  std::deque<Point> to_send;
  int asked = 0;
  bool exhausted = false;
  std::size_t sent = 0;
  const auto start = Clock::now();
  while (!exhausted || asked > 0 || !to_send.empty()) {
    for (; !exhausted && asked + static_cast<int>(to_send.size()) < o.simulated; ++asked) link.ask_for_work({});
    while (asked > 0) {
      auto answer = link.answer();
      if (!answer) break;
      --asked;
      for (Assigned& assigned : *answer) to_send.push_back(std::move(assigned.point));
      // Rank 0 counts this rank finished at its first empty answer, and answers the requests still in
      // flight only while it serves others: they are not waited for (a run's rank asks one at a time).
      if (answer->empty()) {
        exhausted = true;
        asked = 0;
      }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const std::size_t due = share > 0 ? static_cast<std::size_t>(elapsed * share) : sent + to_send.size();
    for (; sent < due && !to_send.empty(); ++sent) {
      const RunRecord record = make_record(to_send.front(), result, me, false);
      std::optional<RunDocuments::Made> made;
      if (documents) made = documents->make(record, me, result.protocol, result.implementation);
      link.send_result(record, result, made ? &made->documents : nullptr);
      to_send.pop_front();
    }
    link.progress();
    if (to_send.empty() || share > 0) std::this_thread::sleep_for(50us);
  }
  link.wait_all_sent();
}

}  // namespace
}  // namespace ks

int main(int argc, char** argv) {
  const auto options = ks::parse_options(argc, argv);
  if (!options) {
    std::fprintf(stderr,
                 "usage: mpirun -np RANKS bench_rank0_ingest [--points N] [--rate R] [--samples S] [--simulated K] "
                 "[--documents on|rank0|off] [--dir FOLDER]\n");
    return 2;
  }
  ks::MpiWorld world(&argc, &argv);
  if (world.rank() == 0) ks::run_root(world, *options);
  else ks::run_generator(world, *options);
  return 0;
}
