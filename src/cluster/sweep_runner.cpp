#include "cluster/sweep_runner.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <list>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "calibration/fleet_health.h"
#include "calibration/probes.h"
#include "calibration/sentinel.h"
#include "cluster/gang.h"
#include "cluster/interruption.h"
#include "cluster/point_record.h"
#include "cluster/poll_interval.h"
#include "cluster/worker_process.h"
#include "cluster/workers.h"
#include "common/bytes.h"
#include "common/canonical_json.h"
#include "common/clock.h"
#include "common/digest.h"
#include "measure/do_bench.h"

namespace ks {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr int kTagRequest = 101;  // rank -> 0: give me work (and the gangs' communicators I lost)
constexpr int kTagAssign = 102;   // 0 -> rank: the points of its next groups (none: no more work)
constexpr int kTagResult = 103;   // rank -> 0: one record
constexpr int kTagHeartbeat = 104;  // rank -> 0: still here (sent while a rank works)
constexpr int kTagStop = 105;       // 0 -> rank: the run is interrupted; abandon the point in hand
constexpr int kTagStopped = 106;    // rank -> 0: stopped, nothing more follows (payload: why)
constexpr int kTagStillParked = 107;  // 0 -> rank: your gang is not formed yet, keep waiting
constexpr int kTagNote = 108;         // rank -> 0: a line for the log (its sentinel found drift)

using Clock = std::chrono::steady_clock;

// How long rank 0 waits without a word from a rank before it counts the rank as gone; the ranks
// send a heartbeat four times within it.
Clock::duration silence_limit() {
  static const Clock::duration limit = [] {
    const char* value = std::getenv("KERNELSWEEP_RANK_SILENCE_TIMEOUT");
    const double seconds = value ? std::atof(value) : 0;
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds > 0 ? seconds : 60));
  }();
  return limit;
}
Clock::duration heartbeat_interval() { return silence_limit() / 4; }

// How long rank 0 waits, once a run is interrupted, for the other ranks to say they stopped. They
// look for the word at least every kLongestMeasuringLook (below), so this is only reached by a rank
// that is stuck.
constexpr auto kWindDownLimit = std::chrono::seconds(30);

// The ceilings of a rank's waits between looks at MPI (poll_interval.h). Rank 0's bounds how long a
// rank asking for work waits for its answer: 5 ms while rank 0's own worker times a point, 1 ms
// while it has none (at the end of a sweep, when the points handed out are small and many ranks
// ask). A rank waiting for its own answer looks as often, its worker being idle meanwhile. A rank
// whose worker measures looks only for a stop from rank 0 and to keep its heartbeat, unless a result
// of its own is still on its way (MPI moves a large one only while its sender looks).
// kIdleLongestLook: rank 0 without a point of its own, and a rank waiting for rank 0's answer.
constexpr auto kRootLongestLook = std::chrono::microseconds(5000);
constexpr auto kIdleLongestLook = std::chrono::microseconds(1000);
constexpr auto kLongestMeasuringLook = std::chrono::microseconds(20'000);
constexpr auto kSendingMeasuringLook = std::chrono::microseconds(1000);

// A point handed to a rank: the ranks other than 0 hold no plan, so the point travels whole (as bytes,
// common/bytes.h), with whether it is checked, and for a collective the gang that measures it together.
struct Assigned {
  Point point;
  bool check = false;
  std::vector<int> gang;
  std::uint32_t generation = 0;  // of the gang's communicator (GangCommunicators::of)
};

std::string encode_assignment(const std::vector<Assigned>& points) {
  std::string out;
  append_value(out, static_cast<std::uint64_t>(points.size()));
  for (const Assigned& a : points) {
    append_value(out, static_cast<std::uint64_t>(a.point.index));
    append_sized_bytes(out, a.point.kernel);
    append_sized_bytes(out, a.point.implementation);
    append_sized_bytes(out, a.point.mode);
    append_sized_bytes(out, a.point.params.dump());
    append_value(out, a.point.timeout_s);
    append_value(out, a.point.key);
    append_value(out, a.point.repetition);
    append_value(out, static_cast<std::uint8_t>(a.check));
    append_values(out, a.gang);
    append_value(out, a.generation);
  }
  return out;
}

std::vector<Assigned> decode_assignment(std::string_view bytes) {
  std::size_t offset = 0;
  const auto count = value_at<std::uint64_t>(bytes, offset);
  need_bytes(bytes, offset, count);  // a point takes more than a byte: a count beyond the bytes is refused
  std::vector<Assigned> out(count);
  for (Assigned& a : out) {
    a.point.index = value_at<std::uint64_t>(bytes, offset);
    a.point.kernel = sized_bytes_at(bytes, offset);
    a.point.implementation = sized_bytes_at(bytes, offset);
    a.point.mode = sized_bytes_at(bytes, offset);
    a.point.params = Json::parse(sized_bytes_at(bytes, offset));
    a.point.timeout_s = value_at<double>(bytes, offset);
    a.point.key = value_at<PointKey>(bytes, offset);
    a.point.repetition = value_at<std::int32_t>(bytes, offset);
    a.check = value_at<std::uint8_t>(bytes, offset) != 0;
    a.gang = values_at<int>(bytes, offset);
    a.generation = value_at<std::uint32_t>(bytes, offset);
  }
  return out;
}

// Result messages in flight from a rank to rank 0; their buffers live until MPI is done with them.
class PendingSends {
 public:
  void send(std::string bytes, int tag) {
    auto& item = items_.emplace_back(std::move(bytes), MPI_REQUEST_NULL);
    MPI_Isend(item.first.data(), static_cast<int>(item.first.size()), MPI_CHAR, 0, tag, MPI_COMM_WORLD, &item.second);
  }
  void progress() {
    for (auto it = items_.begin(); it != items_.end();) {
      int done = 0;
      MPI_Test(&it->second, &done, MPI_STATUS_IGNORE);
      it = done ? items_.erase(it) : std::next(it);
    }
  }
  // A heartbeat to rank 0 when the last one is heartbeat_interval() old.
  void heartbeat() {
    const auto now = Clock::now();
    if (now - last_heartbeat_ < heartbeat_interval()) return;
    last_heartbeat_ = now;
    send(std::string(), kTagHeartbeat);
  }
  bool empty() const { return items_.empty(); }
  void wait_all() {
    while (!items_.empty()) {
      progress();
      if (!items_.empty()) std::this_thread::sleep_for(50us);
    }
  }

 private:
  std::list<std::pair<std::string, MPI_Request>> items_;
  Clock::time_point last_heartbeat_ = Clock::now();
};

// A result as a rank sends it to rank 0: the record's bytes (append_run_record_bytes), then the JSON
// text of the protocol and of the implementation's provenance, each after its length.
std::string encode_result(const RunRecord& record, const MeasureResult& result) {
  std::string out;
  append_run_record_bytes(out, record);
  append_sized_bytes(out, result.protocol.dump());
  append_sized_bytes(out, result.implementation.dump());
  return out;
}

// What every rank must agree on before they measure together: the sweep file and the protocol. The
// plan itself lives on rank 0 only, which sends each rank the points it measures.
std::string agreement_digest(const ProtocolSpec& protocol, const RunOptions& options) {
  return sha256_hex(options.sweep_text + "\n" + to_json(protocol).dump());
}

class Sweep {
 public:
  Sweep(const MpiWorld& world, const WorkPlan* plan, const ProtocolSpec& protocol, const RunOptions& options)
      : world_(world), plan_(plan), protocol_(protocol), options_(options),
        workers_(*options.registry, options.executable, world.local_rank(), options.plugins, options.python) {}

  std::vector<RankIdentity> introduce();
  Json first_hello();
  Json python_facts();
  std::optional<RankCalibration> calibrate();
  void keep_calibration(const std::vector<int>& slow);
  // Both return why the run stopped before its end, or an empty string when it ran to the end.
  std::string run_root(const std::vector<RankIdentity>& ranks, ResultSink& sink);
  std::string run_other();
  const std::vector<SilentRank>& silent_ranks() const { return silent_; }
  void stop_worker() { workers_.stop(); }

 private:
  void check_sweep_is_shared() const;
  void check_gpus_not_shared() const;
  // Takes in what the other ranks sent; whether anything came.
  bool serve_requests(WorkQueue& queue, ResultSink& sink);
  void drop_silent_ranks(WorkQueue& queue, ResultSink& sink);
  void wind_down(WorkQueue& queue, ResultSink& sink);
  bool is_silent(int rank) const;
  bool asked_to_stop();
  std::string why_stop() const;
  std::vector<Assigned> receive_assignment(PendingSends& sends);
  std::vector<Assigned> points_of(const Handout& handout) const;
  void hand_out(const std::vector<Handout>& handouts);
  void note_lost_communicators(const std::vector<std::vector<int>>& member_sets);
  std::uint32_t generation_of(const std::vector<int>& gang) const {
    const auto found = gang_generations_.find(gang);
    return found == gang_generations_.end() ? 0 : found->second;
  }
  void record_unrunnable(WorkQueue& queue, ResultSink& sink);
  std::function<void()> root_duties(WorkQueue& queue, ResultSink& sink);
  void measure_root_gang(const Assigned& assigned, WorkQueue& queue, ResultSink& sink);
  void tell_parked_ranks(const WorkQueue& queue);
  void send_assignment(int rank, const std::vector<Assigned>& points);
  MeasureResult measure_other(const Assigned& assigned, PendingSends& sends);
  RunRecord record_of(const Point& point, const MeasureResult& result) const;
  ProbeResult run_probe(const Point& point, const std::function<void()>& duties);
  std::string check_sentinel(const std::function<void()>& duties);
  void exclude_slow_ranks(WorkQueue& queue);

  const MpiWorld& world_;
  const WorkPlan* plan_;  // rank 0's alone
  const ProtocolSpec& protocol_;
  const RunOptions& options_;
  Workers workers_;
  RankIdentity me_;
  std::size_t received_ = 0;
  int ranks_finished_ = 0;
  // Rank 0's view of the other ranks: when each was last heard from, the points each holds (handed
  // out, no result yet), and those that fell silent.
  std::vector<Clock::time_point> last_heard_;
  std::vector<std::deque<Point>> in_hand_;
  std::vector<bool> finished_;
  std::vector<SilentRank> silent_;
  std::vector<RankIdentity> ranks_;
  GangCommunicators gangs_;
  // Rank 0's: the generation of each gang's communicator, one more each time a member lost it.
  std::map<std::vector<int>, std::uint32_t> gang_generations_;
  Clock::time_point parked_told_ = Clock::now();
  // Rank 0's own work: points handed to it, whether it waits for a gang, whether nothing is left.
  std::deque<Assigned> mine_;
  bool root_waiting_ = false;
  bool root_exhausted_ = false;
  ParsedText protocol_texts_, implementation_texts_;  // of the results received
  // An interrupted run: rank 0 hands out no more work; `stopped_by_` is why another rank stopped
  // (it stops the whole run); the other ranks note rank 0's word to stop in `asked_to_stop_`.
  bool winding_down_ = false;
  std::string stopped_by_;
  bool asked_to_stop_ = false;
  Sentinel sentinel_;         // off unless the run asks for it and the rank is calibrated
  std::vector<int> set_aside_;  // the slow ranks (ranks_to_set_aside), as rank 0 found them at the start
  std::set<int> excluded_;      // rank 0's: slow ranks given no work (--exclude-slow)
};

RunRecord Sweep::record_of(const Point& point, const MeasureResult& result) const {
  const bool on_gpu = timed_on_gpu(needs_gpu(*options_.registry, point), result);
  MeasureResult counted = result;
  if (std::isnan(result.record.flops) && result.record.n_repeat > 0) {
    // A Python worker counts the work of kernels declared in Python; that of kernels declared in C++
    // is counted here, from the declaration, as the C++ worker counts it.
    const Work work = options_.registry->find(point.kernel)->work_of(point.params, point.mode);
    counted.record.flops = work.flops;
    counted.record.bytes = work.bytes;
  }
  RunRecord record = make_record(point, counted, me_, on_gpu);
  if (sentinel_.drifting() && record.n_repeat > 0) record.flags += record.flags.empty() ? "drift" : ",drift";
  return record;
}

// Whether the worker compares the point's result with its reference: every point, none, or the
// first of its group (the first mode of a shape) in the shape's first repetition. A shape's further
// repetitions compute what the first did; checking them again would cost each a reference run (and,
// for torch.compile'd code, a compilation afresh after the check) without telling anything new.
bool checks(CheckPolicy policy, const Point& point, bool first_of_group) {
  switch (policy) {
    case CheckPolicy::none: return false;
    case CheckPolicy::every_mode: return true;
    case CheckPolicy::first_mode: return first_of_group && point.repetition == 0;
  }
  return false;
}

// The points of `groups` still to measure, made again from rank 0's plan, each with whether the
// worker checks it.
std::vector<Assigned> Sweep::points_of(const Handout& handout) const {
  std::vector<Assigned> out;
  for (std::size_t group : handout.groups) {
    bool first = true;
    for (Point& point : plan_->points_to_measure(group)) {
      const bool check = checks(options_.check, point, first);
      out.push_back({std::move(point), check, handout.gang, generation_of(handout.gang)});
      first = false;
    }
  }
  return out;
}

// Sends each handout to its rank (rank 0's own to its list). A gang's point is in the hand of its
// first member, which records it; its members' handouts come one after another, and its points are
// made once for all of them.
void Sweep::hand_out(const std::vector<Handout>& handouts) {
  note_lost_communicators(gangs_.take_lost());  // rank 0's own, from the gang points it measured
  const Handout* gang_made = nullptr;
  std::vector<Assigned> gang_points;
  for (const Handout& handout : handouts) {
    const bool same_gang = gang_made && !handout.gang.empty() && handout.gang == gang_made->gang &&
                           handout.groups == gang_made->groups;
    std::vector<Assigned> points = winding_down_ ? std::vector<Assigned>() : same_gang ? gang_points : points_of(handout);
    if (!handout.gang.empty() && !same_gang) {
      gang_made = &handout;
      gang_points = points;
    }
    const bool records = handout.gang.empty() || handout.gang.front() == handout.rank;
    if (handout.rank == 0) {
      root_waiting_ = false;
      root_exhausted_ = points.empty();
      for (Assigned& assigned : points) mine_.push_back(std::move(assigned));
      continue;
    }
    send_assignment(handout.rank, points);
    if (records)
      for (const Assigned& assigned : points) in_hand_[handout.rank].push_back(assigned.point);
    if (points.empty() && !finished_[handout.rank]) {
      finished_[handout.rank] = true;
      ++ranks_finished_;
    }
  }
}

void Sweep::note_lost_communicators(const std::vector<std::vector<int>>& member_sets) {
  for (const auto& members : member_sets) ++gang_generations_[members];
}

// Groups the queue found no ranks for (no GPU, a gang larger than the ranks left): recorded
// `skipped` with the reason, unless an earlier run recorded them so for a reason that still holds.
void Sweep::record_unrunnable(WorkQueue& queue, ResultSink& sink) {
  std::size_t left_skipped = 0;
  for (const auto& [group, reason] : queue.take_unrunnable()) {
    for (const Point& point : plan_->points_to_measure(group)) {
      ++received_;
      if (!options_.retry_skipped && plan_->skipped_before(point)) {
        ++left_skipped;
        continue;
      }
      sink.on_record(skipped_record(point, reason), Json(), Json());
    }
  }
  if (left_skipped > 0) sink.on_left_skipped(left_skipped);
}

// Ranks parked for a gang hear from rank 0 within their wait for work: it is alive, the gang not yet
// formed.
void Sweep::tell_parked_ranks(const WorkQueue& queue) {
  const auto now = Clock::now();
  if (now - parked_told_ < heartbeat_interval()) return;
  parked_told_ = now;
  for (int rank : queue.parked()) {
    if (rank == 0) continue;
    MPI_Request request;
    MPI_Isend(nullptr, 0, MPI_CHAR, rank, kTagStillParked, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
  }
}

// What rank 0 keeps doing while its own worker or a gang holds it: it serves the other ranks.
std::function<void()> Sweep::root_duties(WorkQueue& queue, ResultSink& sink) {
  return [this, &queue, &sink] {
    serve_requests(queue, sink);
    drop_silent_ranks(queue, sink);
    tell_parked_ranks(queue);
    sink.on_tick();
  };
}

// Rank 0 as a member of a gang: it serves the other ranks while MPI works.
void Sweep::measure_root_gang(const Assigned& assigned, WorkQueue& queue, ResultSink& sink) {
  const std::function<void()> duties = root_duties(queue, sink);
  const auto result = measure_in_gang(assigned.point, assigned.gang, assigned.generation, assigned.check, protocol_, gangs_,
                                      workers_, duties);
  if (!result) return;
  sink.on_record(record_of(assigned.point, *result), result->protocol, result->implementation);
  ++received_;
}

void Sweep::check_sweep_is_shared() const {
  const std::string mine = agreement_digest(protocol_, options_);
  const std::string roots = world_.broadcast_from_root(mine);
  if (!world_.all(mine == roots))
    throw RunError("the ranks read different sweep files (is the sweep file the same on every node?)");
}

void Sweep::check_gpus_not_shared() const {
  const auto uuids = world_.allgather_node(me_.gpu.uuid);
  std::string problem;
  for (int other = 0; other < static_cast<int>(uuids.size()); ++other)
    if (other != world_.local_rank() && !me_.gpu.uuid.empty() && uuids[other] == me_.gpu.uuid && problem.empty())
      problem = fmt::format("ranks share GPU {} on host {} ({} ranks on the node, {} GPUs visible to each): "
                            "start one rank per GPU, or pass --allow-shared-gpu",
                            me_.gpu.uuid, me_.host.hostname, world_.local_size(), me_.gpu_count);
  if (options_.allow_shared_gpu) problem.clear();
  const auto problems = world_.gather_to_root(problem);
  const bool ok = world_.all(problem.empty());
  if (ok) return;
  std::string first;
  for (const auto& p : problems)
    if (!p.empty()) { first = p; break; }
  throw RunError(first.empty() ? "ranks share a GPU" : first);
}

// The worker's hello says what this rank runs on. Should no worker start, the rank still takes part
// (its points are recorded `crashed`, with the reason) and says what it can from here: its host.
// A stop while the worker starts (Interrupted) is noticed again at the top of the loop, where every
// rank has joined, and ends the run in order from there.
Json Sweep::first_hello() {
  const auto without_worker = [](const std::string& problem) {
    return Json{{"type", "hello"}, {"gpu_count", 0}, {"gpu", to_json(GpuInfo{})}, {"host", to_json(read_host_info())},
                {"problem", problem}};
  };
  try {
    return workers_.ensure_started();
  } catch (const WorkerStartError& e) {
    return without_worker(e.what());
  } catch (const Interrupted& e) {
    return without_worker(e.what());
  }
}

// What the environment documents record of the Python worker; it is started now, on every rank, when
// the plan has Python implementations.
Json Sweep::python_facts() {
  // Rank 0 alone holds the plan, and says.
  const bool root_says = world_.rank() == 0 && plan_->any_in_python();
  if (world_.broadcast_from_root(root_says ? "python" : "") != "python") return nullptr;
  try {
    return workers_.ensure_python_started().value("python", Json::object());
  } catch (const WorkerStartError& e) {
    return {{"problem", e.what()}};
  } catch (const Interrupted& e) {
    return {{"problem", e.what()}};
  }
}

std::vector<RankIdentity> Sweep::introduce() {
  check_sweep_is_shared();
  gangs_.open(world_.duplicate_world("the set-up of the gangs' communicators"));
  const Json hello = first_hello();
  me_.rank = world_.rank();
  me_.local_rank = world_.local_rank();
  me_.gpu_count = hello.at("gpu_count").get<int>();
  me_.host = host_info_from_json(hello.at("host"));
  me_.host.mpi_version = MpiWorld::library_version();
  me_.gpu = gpu_info_from_json(hello.at("gpu"));
  me_.problem = hello.value("problem", "");
  me_.python = python_facts();
  check_gpus_not_shared();
  me_.calibration = calibrate();
  std::vector<RankIdentity> ranks;
  for (const auto& text : world_.gather_to_root(to_json(me_).dump()))
    ranks.push_back(rank_identity_from_json(Json::parse(text)));
  // Every rank learns which ranks are slow, so that a slow one does not keep its figures for later
  // runs (they would be held against figures its device does not have when it is well).
  const Json aside = ranks_to_set_aside(slow_ranks(calibrations_of(ranks)));
  const std::string slow = world_.broadcast_from_root(aside.dump());
  set_aside_ = Json::parse(slow).get<std::vector<int>>();
  keep_calibration(set_aside_);
  if (me_.calibration && options_.sentinel_every.count() > 0)
    sentinel_ = Sentinel(options_.sentinel_every, me_.calibration->primary());
  return ranks;
}

// A probe point measured by this rank's worker, `duties` done while it runs (rank 0 serves the
// others; the others keep their heartbeat).
ProbeResult Sweep::run_probe(const Point& point, const std::function<void()>& duties) {
  workers_.begin({point, probe_protocol(), false, std::nullopt});
  for (;;) {
    if (const auto result = workers_.poll(kLongestMeasuringLook))
      return ProbeResult{result->record.status, result->record.message, result->record.stats.min_ns};
    if (stop_requested() || (world_.rank() != 0 && asked_to_stop())) throw Interrupted(why_stop());
    if (duties) duties();
  }
}

// The sentinel, when it is due: the line to log when the rank's devices drifted from their
// calibration or came back (empty otherwise).
std::string Sweep::check_sentinel(const std::function<void()>& duties) {
  if (!sentinel_.due()) return "";
  const ProbeRunner run = [&](const Point& point) { return run_probe(point, duties); };
  return sentinel_.check(*options_.registry, run, fmt::format("rank {} on {}", me_.rank, me_.host.hostname));
}

// --exclude-slow: the slow ranks (ranks_to_set_aside) are given no work; the groups they would have
// measured go to the others (a gang that needs them all is recorded skipped, with why).
void Sweep::exclude_slow_ranks(WorkQueue& queue) {
  if (!options_.exclude_slow) return;
  for (int rank : set_aside_) {
    excluded_.insert(rank);
    hand_out(queue.forget(rank));
    if (rank == 0) root_exhausted_ = true;
  }
}

// The rank's calibration: kept from an earlier run on the same devices (auto), or measured now by
// its worker, point after point, and kept for the next. None where the run does not calibrate, where
// the worker did not start, and where a stop came meanwhile (noticed again at the top of the loop).
std::optional<RankCalibration> Sweep::calibrate() {
  if (options_.calibrate == CalibrationMode::off || !me_.problem.empty()) return std::nullopt;
  const bool keeps = !options_.calibration_folder.empty();
  const auto file = calibration_cache_file(options_.calibration_folder, me_.host, me_.gpu, world_.local_size());
  if (keeps && options_.calibrate == CalibrationMode::automatic)
    if (auto kept = read_cached_calibration(file)) {
      kept->rank = me_.rank;
      return kept;
    }
  const ProbeRunner run = [&](const Point& point) { return run_probe(point, nullptr); };
  try {
    const GpuInfo gpu = me_.gpu_count > 0 ? me_.gpu : GpuInfo{};
    RankCalibration calibration = calibrate_rank(me_.rank, me_.host, gpu, *options_.registry, run);
    calibration.cpu.measured_beside = world_.local_size();
    return calibration;
  } catch (const Interrupted&) {
    return std::nullopt;
  }
}

// A calibration measured by this run is kept for later ones (in the calibration folder), unless the
// rank is among the `slow`.
void Sweep::keep_calibration(const std::vector<int>& slow) {
  if (!me_.calibration || me_.calibration->reused || options_.calibration_folder.empty()) return;
  if (std::find(slow.begin(), slow.end(), me_.rank) != slow.end()) {
    std::cerr << fmt::format("kernelsweep: rank {}: measured more than {:.0f}% below the ranks like it: its calibration is "
                             "not kept, and the next run measures again\n", me_.rank, 100 * kSlowFraction);
    return;
  }
  try {
    write_cached_calibration(calibration_cache_file(options_.calibration_folder, me_.host, me_.gpu, world_.local_size()),
                             *me_.calibration);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("kernelsweep: rank {}: the calibration was not kept ({}): the next run measures again\n",
                             me_.rank, e.what());
  }
}

bool Sweep::is_silent(int rank) const {
  return std::any_of(silent_.begin(), silent_.end(), [&](const SilentRank& s) { return s.rank == rank; });
}

bool Sweep::serve_requests(WorkQueue& queue, ResultSink& sink) {
  for (bool served = false;; served = true) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
    if (!waiting) return served;
    const int source = status.MPI_SOURCE;
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string bytes(static_cast<std::size_t>(length), '\0');
    MPI_Recv(bytes.data(), length, MPI_CHAR, source, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    // A rank counted as gone that speaks again gets nothing more, and what it sends is dropped:
    // its points were recorded already, and --resume measures them again.
    if (is_silent(source)) {
      if (status.MPI_TAG == kTagRequest) send_assignment(source, {});  // no work: stop
      continue;
    }
    last_heard_[source] = Clock::now();
    if (status.MPI_TAG == kTagRequest) {
      note_lost_communicators(decode_member_sets(bytes));
      if (winding_down_ || excluded_.count(source)) hand_out({Handout{source, {}, {}}});
      else hand_out(queue.ask(source));
    } else if (status.MPI_TAG == kTagResult) {
      std::size_t offset = 0;
      RunRecord record = run_record_from_bytes(bytes, offset);
      const Json& protocol = protocol_texts_.parse(sized_bytes_at(bytes, offset));
      const Json& implementation = implementation_texts_.parse(sized_bytes_at(bytes, offset));
      auto& held = in_hand_[source];
      const PointKey key = point_key(record.point_id);
      const auto at = std::find_if(held.begin(), held.end(), [&](const Point& point) { return point.key == key; });
      if (at != held.end()) held.erase(at);
      sink.on_record(std::move(record), protocol, implementation);
      ++received_;
    } else if (status.MPI_TAG == kTagStopped) {
      // Its results came before this (messages from one rank arrive in order); the points it still
      // held have no row, and --resume measures them.
      if (!finished_[source]) {
        finished_[source] = true;
        ++ranks_finished_;
      }
      if (stopped_by_.empty()) stopped_by_ = fmt::format("rank {} on {} stopped ({})", source, ranks_[source].host.hostname, bytes);
    } else if (status.MPI_TAG == kTagNote) {
      sink.on_note(bytes);
    } else if (status.MPI_TAG != kTagHeartbeat) {
      throw std::logic_error(fmt::format("rank 0 got a message with unknown tag {}", status.MPI_TAG));
    }
  }
}

// Ranks not heard from within the silence limit are gone: the points they hold are recorded
// `crashed`, and the sweep goes on with the others.
void Sweep::drop_silent_ranks(WorkQueue& queue, ResultSink& sink) {
  const auto now = Clock::now();
  for (int rank = 1; rank < world_.size(); ++rank) {
    if (finished_[rank] || is_silent(rank) || now - last_heard_[rank] < silence_limit()) continue;
    const double seconds = std::chrono::duration<double>(now - last_heard_[rank]).count();
    SilentRank silent{rank, ranks_[rank].host.hostname, in_hand_[rank].size()};
    for (const Point& point : in_hand_[rank]) {
      MeasureResult lost;
      lost.record.status = "crashed";
      lost.record.message = fmt::format("rank {} on {} stopped answering (nothing heard for {:.0f} s); the sweep went on "
                                        "without it, and --resume measures this point again",
                                        rank, silent.host, seconds);
      lost.record.started_at = lost.record.ended_at = iso_utc_now();
      RunRecord record = make_record(point, lost, ranks_[rank], needs_gpu(*options_.registry, point));
      sink.on_record(std::move(record), Json(), Json());
      ++received_;
    }
    in_hand_[rank].clear();
    silent_.push_back(silent);
    ++ranks_finished_;
    hand_out(queue.forget(rank));  // ranks parked for a gang it would have joined may go on
    record_unrunnable(queue, sink);
  }
}

std::string Sweep::run_root(const std::vector<RankIdentity>& ranks, ResultSink& sink) {
  std::vector<bool> rank_has_gpu;
  std::vector<std::string> rank_host;
  for (const auto& r : ranks) {
    rank_has_gpu.push_back(r.gpu_count > 0);
    rank_host.push_back(r.host.hostname);
  }
  WorkQueue queue(plan_->groups_to_measure(), [this](std::size_t group) { return plan_->needs(group); }, rank_has_gpu,
                  rank_host, options_.schedule);

  const std::uint64_t expected = plan_->to_measure();
  const int others = world_.size() - 1;
  ranks_ = ranks;
  last_heard_.assign(world_.size(), Clock::now());
  in_hand_.assign(world_.size(), {});
  finished_.assign(world_.size(), false);
  // A stop while the workers started leaves ranks that look as if they had no GPU: nothing is
  // recorded skipped for that.
  exclude_slow_ranks(queue);
  if (!stop_requested()) record_unrunnable(queue, sink);
  // While rank 0's own worker starts (which may take a while), the others are still served.
  workers_.set_waiting_hook([&] { serve_requests(queue, sink); });
  // Alone, rank 0 has only its own worker to wait for, and looks at MPI (for nothing) every 50 ms.
  PollInterval interval = others > 0 ? PollInterval(200us, kRootLongestLook) : PollInterval(50ms, 50ms);
  const std::function<void()> duties = root_duties(queue, sink);
  Point current;
  std::string interruption;
  try {
    while (received_ < expected || ranks_finished_ < others) {
      if (stop_requested()) interruption = stop_reason();
      else if (!stopped_by_.empty()) interruption = stopped_by_;
      if (!interruption.empty()) break;
      if (!workers_.busy()) {
        if (mine_.empty() && !root_exhausted_ && !root_waiting_) {
          root_waiting_ = true;
          hand_out(queue.ask(0));
        }
        while (!mine_.empty() && !mine_.front().gang.empty()) {
          const Assigned assigned = std::move(mine_.front());
          mine_.pop_front();
          measure_root_gang(assigned, queue, sink);
        }
        if (!mine_.empty()) {
          if (const std::string drift = check_sentinel(duties); !drift.empty()) sink.on_note(drift);
          current = std::move(mine_.front().point);
          workers_.begin({current, protocol_, mine_.front().check, std::nullopt});
          mine_.pop_front();
        }
      }
      bool found = false;
      if (workers_.busy()) {
        if (auto result = workers_.poll(interval.next())) {
          sink.on_record(record_of(current, *result), result->protocol, result->implementation);
          ++received_;
          found = true;
        }
      } else {
        std::this_thread::sleep_for(std::min<std::chrono::microseconds>(interval.next(), kIdleLongestLook));
      }
      found = serve_requests(queue, sink) || found;
      interval.after_look(found);
      drop_silent_ranks(queue, sink);
      tell_parked_ranks(queue);
      sink.on_tick();
    }
  } catch (const Interrupted&) {  // a stop while this rank's worker started
    interruption = stop_reason();
  }
  workers_.set_waiting_hook(nullptr);
  if (!interruption.empty()) wind_down(queue, sink);
  return interruption;
}

// An interrupted run ends in order: rank 0 abandons its point in hand, tells the other ranks to
// stop, and takes in what they still send (results made before they heard, which are stored) until
// each has said it stopped. The job then ends as a finished one does, every rank together, with no
// rank aborted and none left running.
void Sweep::wind_down(WorkQueue& queue, ResultSink& sink) {
  winding_down_ = true;
  workers_.stop();
  for (int rank : queue.take_parked()) hand_out({Handout{rank, {}, {}}});  // ranks waiting for a gang
  for (int rank = 1; rank < world_.size(); ++rank) {
    if (finished_[rank] || is_silent(rank)) continue;
    MPI_Request request;
    MPI_Isend(nullptr, 0, MPI_CHAR, rank, kTagStop, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
  }
  const int others = world_.size() - 1;
  const auto deadline = Clock::now() + kWindDownLimit;
  while (ranks_finished_ < others && Clock::now() < deadline) {
    serve_requests(queue, sink);
    drop_silent_ranks(queue, sink);
    sink.on_tick();
    std::this_thread::sleep_for(200us);
  }
  for (int rank = 1; rank < world_.size(); ++rank)
    if (!finished_[rank] && !is_silent(rank))
      std::fprintf(stderr, "kernelsweep: rank %d did not stop within %lld s of the interruption\n", rank,
                   static_cast<long long>(kWindDownLimit.count()));
}

bool Sweep::asked_to_stop() {
  if (asked_to_stop_) return true;
  int arrived = 0;
  MPI_Iprobe(0, kTagStop, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
  if (!arrived) return false;
  MPI_Recv(nullptr, 0, MPI_CHAR, 0, kTagStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  asked_to_stop_ = true;
  return true;
}

// Why this rank stops: its own signal, or rank 0's word.
std::string Sweep::why_stop() const { return asked_to_stop_ ? "rank 0 asked" : stop_reason(); }

// Sends `points` to `rank` (none: no more work).
void Sweep::send_assignment(int rank, const std::vector<Assigned>& points) {
  const std::string bytes = points.empty() ? std::string() : encode_assignment(points);
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, rank, kTagAssign, MPI_COMM_WORLD);
}

std::vector<Assigned> Sweep::receive_assignment(PendingSends& sends) {
  // The request carries the gangs' communicators this rank lost since it last asked.
  const std::string lost = encode_member_sets(gangs_.take_lost());
  MPI_Send(lost.data(), static_cast<int>(lost.size()), MPI_CHAR, 0, kTagRequest, MPI_COMM_WORLD);
  MPI_Status status;
  // Rank 0 answers within microseconds, unless a write of the results file holds it up: five times
  // the silence limit before this rank gives up on it (and the job ends).
  // A stop while the request is out waits for the answer all the same, so that no assignment is left
  // on its way when the job ends.
  auto deadline = Clock::now() + 5 * silence_limit();
  bool stopping = false;
  PollInterval interval(50us, kIdleLongestLook);
  for (int arrived = 0;;) {
    MPI_Iprobe(0, kTagAssign, MPI_COMM_WORLD, &arrived, &status);
    if (arrived) break;
    MPI_Iprobe(0, kTagStillParked, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
    if (arrived) {  // waiting for a gang's other members, however long they take
      MPI_Recv(nullptr, 0, MPI_CHAR, 0, kTagStillParked, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      deadline = Clock::now() + 5 * silence_limit();
    }
    stopping = stopping || stop_requested() || asked_to_stop();
    if (Clock::now() > deadline)
      throw std::runtime_error(fmt::format("rank 0 stopped answering: no work or word from it for {:.0f} s",
                                           std::chrono::duration<double>(5 * silence_limit()).count()));
    sends.progress();
    sends.heartbeat();
    std::this_thread::sleep_for(interval.next());  // a blocking receive would spin a core the workers need
    interval.after_look(false);
  }
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string bytes(static_cast<std::size_t>(count), '\0');
  MPI_Recv(bytes.data(), count, MPI_CHAR, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (stopping || stop_requested() || asked_to_stop()) throw Interrupted(why_stop());
  return bytes.empty() ? std::vector<Assigned>() : decode_assignment(bytes);
}

MeasureResult Sweep::measure_other(const Assigned& assigned, PendingSends& sends) {
  workers_.set_waiting_hook([&] { sends.heartbeat(); });  // a worker being started is no silence either
  workers_.begin({assigned.point, protocol_, assigned.check, std::nullopt});
  for (;;) {
    // The worker's result ends the wait at once, whatever its length.
    if (auto result = workers_.poll(sends.empty() ? kLongestMeasuringLook : kSendingMeasuringLook)) return *result;
    if (stop_requested() || asked_to_stop()) throw Interrupted(why_stop());
    sends.progress();  // large results need this side's help to move (rendezvous)
    sends.heartbeat();
  }
}

std::string Sweep::run_other() {
  PendingSends sends;
  // What this rank keeps doing while its worker or a gang holds it: its results move, rank 0 hears from it.
  const std::function<void()> keep_in_touch = [&] {
    sends.progress();
    sends.heartbeat();
  };
  std::string interruption;
  try {
    for (;;) {
      const auto points = receive_assignment(sends);
      if (points.empty()) break;
      for (const Assigned& assigned : points) {
        if (!assigned.gang.empty()) {
          // A gang's point runs to its end (its timeout bounds it) even when a stop comes meanwhile:
          // the other members are in it too.
          const auto result = measure_in_gang(assigned.point, assigned.gang, assigned.generation, assigned.check, protocol_, gangs_,
                                      workers_, keep_in_touch);
          if (result) sends.send(encode_result(record_of(assigned.point, *result), *result), kTagResult);
          continue;
        }
        if (const std::string drift = check_sentinel(keep_in_touch); !drift.empty()) sends.send(drift, kTagNote);
        const MeasureResult result = measure_other(assigned, sends);
        sends.send(encode_result(record_of(assigned.point, result), result), kTagResult);
      }
    }
  } catch (const Interrupted&) {
    interruption = why_stop();
  }
  sends.wait_all();
  if (interruption.empty()) return interruption;
  // The point in hand is abandoned (no row: --resume measures it); rank 0 learns that nothing more
  // comes from this rank, and why.
  workers_.stop();
  MPI_Send(interruption.data(), static_cast<int>(interruption.size()), MPI_CHAR, 0, kTagStopped, MPI_COMM_WORLD);
  return interruption;
}

}  // namespace

std::chrono::seconds collective_deadline() {
  return std::chrono::duration_cast<std::chrono::seconds>(2 * WorkerProcess::kStartAttempts * WorkerProcess::start_timeout() +
                                                          5 * silence_limit());
}

PlanOutcome measure_plan(const MpiWorld& world, const WorkPlan* plan, const ProtocolSpec& protocol,
                         const RunOptions& options, ResultSink* sink) {
  Sweep sweep(world, plan, protocol, options);
  const auto ranks = sweep.introduce();
  PlanOutcome outcome;
  if (world.rank() == 0) {
    sink->on_start(ranks);
    outcome.interrupted = sweep.run_root(ranks, *sink);
  } else {
    outcome.interrupted = sweep.run_other();
  }
  sweep.stop_worker();
  outcome.silent_ranks = sweep.silent_ranks();
  return outcome;
}

std::vector<RankCalibration> calibrations_of(const std::vector<RankIdentity>& ranks) {
  std::vector<RankCalibration> out;
  for (const RankIdentity& rank : ranks)
    if (rank.calibration) out.push_back(*rank.calibration);
  return out;
}

Json to_json(const RankIdentity& r) {
  return {{"rank", r.rank}, {"local_rank", r.local_rank}, {"gpu_count", r.gpu_count},
          {"host", to_json(r.host)}, {"gpu", to_json(r.gpu)}, {"problem", r.problem}, {"python", r.python},
          {"calibration", r.calibration ? to_json(*r.calibration) : Json()}};
}

RankIdentity rank_identity_from_json(const Json& j) {
  RankIdentity r;
  r.rank = j.at("rank").get<int>();
  r.local_rank = j.at("local_rank").get<int>();
  r.gpu_count = j.at("gpu_count").get<int>();
  r.host = host_info_from_json(j.at("host"));
  r.gpu = gpu_info_from_json(j.at("gpu"));
  r.problem = j.at("problem").get<std::string>();
  r.python = j.value("python", Json());
  if (const auto it = j.find("calibration"); it != j.end() && !it->is_null()) r.calibration = rank_calibration_from_json(*it);
  return r;
}

}  // namespace ks
