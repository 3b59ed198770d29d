#include "cluster/participant.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "calibration/fleet_health.h"
#include "calibration/probes.h"
#include "cluster/interruption.h"
#include "cluster/point_record.h"
#include "cluster/rank_messages.h"
#include "common/clock.h"
#include "common/digest.h"

namespace ks {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

}  // namespace

Participant::Participant(const MpiWorld& world, const ProtocolSpec& protocol, const RunOptions& options)
    : world_(world),
      protocol_(protocol),
      options_(options),
      workers_(*options.registry, options.executable, world.local_rank(), options.plugins, options.python) {}

RunRecord Participant::record_of(const Point& point, const MeasureResult& result) const {
  // Timed on the GPU: a cuda implementation, or an `any` one that the worker ran on the rank's GPU (its
  // protocol's timer says so).
  const bool on_gpu = needs_gpu(*options_.registry, point) ||
                      (result.protocol.is_object() && result.protocol.value("timer", "") == "cuda_events");
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

// What every rank must agree on before they measure together: the sweep file and the protocol. The
// plan itself lives on rank 0 only, which sends each rank the points it measures.
void Participant::check_sweep_is_shared() const {
  const std::string mine = sha256_hex(options_.sweep_text + "\n" + to_json(protocol_).dump());
  const std::string roots = world_.broadcast_from_root(mine);
  if (!world_.all(mine == roots))
    throw RunError("the ranks read different sweep files (is the sweep file the same on every node?)");
}

void Participant::check_gpus_not_shared() const {
  // Every local rank's GPU, this rank's own among them: shared when it is there twice.
  const auto uuids = world_.allgather_node(me_.gpu.uuid);
  std::string problem;
  if (!me_.gpu.uuid.empty() && std::count(uuids.begin(), uuids.end(), me_.gpu.uuid) > 1 && !options_.allow_shared_gpu)
    problem = fmt::format(
        "ranks share GPU {} on host {} ({} ranks on the node, {} GPUs visible to each): "
        "start one rank per GPU, or pass --allow-shared-gpu",
        me_.gpu.uuid, me_.host.hostname, world_.local_size(), me_.gpu_count);
  const auto problems = world_.gather_to_root(problem);
  if (world_.all(problem.empty())) return;
  const auto first = std::find_if(problems.begin(), problems.end(), [](const std::string& p) { return !p.empty(); });
  throw RunError(first == problems.end() ? "ranks share a GPU" : *first);
}

// The worker's hello says what this rank runs on. Should no worker start, the rank still takes part
// (its points are recorded `crashed`, with the reason) and says what it can from here: its host.
// A stop while the worker starts (Interrupted) is noticed again at the top of the loop, where every
// rank has joined, and ends the run in order from there.
Json Participant::first_hello() {
  try {
    return workers_.ensure_started();
  } catch (const WorkerStartError& e) { return hello_message(0, GpuInfo{}, e.what()); } catch (const Interrupted& e) {
    return hello_message(0, GpuInfo{}, e.what());
  }
}

// What the environment documents record of the Python worker; it is started now, on every rank, when
// the plan has Python implementations.
Json Participant::python_facts(bool plan_in_python) {
  // Rank 0 alone holds the plan, and says.
  const bool root_says = world_.rank() == 0 && plan_in_python;
  if (world_.broadcast_from_root(root_says ? "python" : "") != "python") return nullptr;
  try {
    return workers_.ensure_python_started().value("python", Json::object());
  } catch (const WorkerStartError& e) { return {{"problem", e.what()}}; } catch (const Interrupted& e) {
    return {{"problem", e.what()}};
  }
}

std::vector<RankIdentity> Participant::introduce(bool plan_in_python) {
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
  me_.python = python_facts(plan_in_python);
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
ProbeResult Participant::run_probe(const Point& point, const std::function<void()>& duties) {
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
std::string Participant::check_sentinel(const std::function<void()>& duties) {
  if (!sentinel_.due()) return "";
  const ProbeRunner run = [&](const Point& point) { return run_probe(point, duties); };
  return sentinel_.check(*options_.registry, run, fmt::format("rank {} on {}", me_.rank, me_.host.hostname));
}

// The rank's calibration: kept from an earlier run on the same devices (auto), or measured now by
// its worker, point after point, and kept for the next. None where the run does not calibrate, where
// the worker did not start, and where a stop came meanwhile (noticed again at the top of the loop).
std::optional<RankCalibration> Participant::calibrate() {
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
  } catch (const Interrupted&) { return std::nullopt; }
}

// A calibration measured by this run is kept for later ones (in the calibration folder), unless the
// rank is among the `slow`.
void Participant::keep_calibration(const std::vector<int>& slow) {
  if (!me_.calibration || me_.calibration->reused || options_.calibration_folder.empty()) return;
  if (std::find(slow.begin(), slow.end(), me_.rank) != slow.end()) {
    std::cerr << fmt::format(
        "kernelsweep: rank {}: measured {} the ranks like it: its calibration is not kept, and the next run "
        "measures again\n",
        me_.rank, slow_rule());
    return;
  }
  try {
    write_cached_calibration(
        calibration_cache_file(options_.calibration_folder, me_.host, me_.gpu, world_.local_size()), *me_.calibration);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("kernelsweep: rank {}: the calibration was not kept ({}): the next run measures again\n",
                             me_.rank, e.what());
  }
}

bool Participant::asked_to_stop() {
  if (!asked_to_stop_) asked_to_stop_ = link_.stop_arrived();
  return asked_to_stop_;
}

// Why this rank stops: its own signal, or rank 0's word.
std::string Participant::why_stop() const { return asked_to_stop_ ? "rank 0 asked" : stop_reason(); }

// What this rank keeps doing while its worker or a gang holds it: its results move, rank 0 hears from it.
void Participant::keep_in_touch() {
  link_.progress();
  link_.heartbeat();
}

std::vector<Assigned> Participant::receive_assignment() {
  link_.ask_for_work(gangs_.take_lost());
  // Rank 0 answers within microseconds, unless a write of the results file holds it up: five times
  // the silence limit before this rank gives up on it (and the job ends).
  // A stop while the request is out waits for the answer all the same, so that no assignment is left
  // on its way when the job ends.
  auto deadline = Clock::now() + 5 * silence_limit();
  bool stopping = false;
  PollInterval interval(50us, kIdleLongestLook);
  std::optional<std::vector<Assigned>> points;
  while (!(points = link_.answer())) {
    // Waiting for a gang's other members, or (nothing left for this rank) for the others' last points,
    // however long they take: rank 0 says now and then that it is alive.
    if (link_.still_parked()) deadline = Clock::now() + 5 * silence_limit();
    stopping = stopping || stop_requested() || asked_to_stop();
    if (Clock::now() > deadline)
      throw std::runtime_error(fmt::format("rank 0 stopped answering: no work or word from it for {:.0f} s",
                                           std::chrono::duration<double>(5 * silence_limit()).count()));
    keep_in_touch();
    std::this_thread::sleep_for(interval.next());  // a blocking receive would spin a core the workers need
    interval.after_look(false);
  }
  if (stopping || stop_requested() || asked_to_stop()) throw Interrupted(why_stop());
  return std::move(*points);
}

MeasureResult Participant::measure_alone(const Assigned& assigned) {
  workers_.set_waiting_hook([&] { link_.heartbeat(); });  // a worker being started is no silence either
  begin(assigned);
  for (;;) {
    // The worker's result ends the wait at once, whatever its length.
    if (auto result = workers_.poll(link_.all_sent() ? kLongestMeasuringLook : kSendingMeasuringLook)) return *result;
    if (stop_requested() || asked_to_stop()) throw Interrupted(why_stop());
    keep_in_touch();  // large results need this side's help to move (rendezvous)
  }
}

void Participant::begin(const Assigned& assigned) {
  workers_.begin({assigned.point, protocol_, assigned.check, std::nullopt});
}

// A gang's point runs to its end (its timeout bounds it) even when a stop comes meanwhile: the other
// members are in it too.
std::optional<MeasureResult> Participant::measure_in_gang(const Assigned& assigned,
                                                          const std::function<void()>& duties) {
  return ks::measure_in_gang(assigned.point, assigned.gang, assigned.generation, assigned.check, protocol_, gangs_,
                             workers_, duties);
}

void Participant::make_documents(RunLabels labels) {
  documents_.emplace(*options_.registry, protocol_, std::move(labels));
}

// A record that no document can describe (a malformed time) goes without: rank 0 then makes its
// documents, and says why it cannot, as for a record of its own.
void Participant::send_result(const Point& point, const MeasureResult& result) {
  const RunRecord record = record_of(point, result);
  std::optional<RunDocuments::Made> made;
  if (documents_) {
    try {
      made = documents_->make(record, me_, result.protocol, result.implementation);
    } catch (const std::exception&) { made.reset(); }
  }
  link_.send_result(record, result, made ? &made->documents : nullptr);
}

std::string Participant::run() {
  const std::function<void()> duties = [this] { keep_in_touch(); };
  std::string interruption;
  try {
    for (;;) {
      const auto points = receive_assignment();
      if (points.empty()) break;
      for (const Assigned& assigned : points) {
        if (!assigned.gang.empty()) {
          const auto result = measure_in_gang(assigned, duties);
          if (result) send_result(assigned.point, *result);
          continue;
        }
        if (const std::string drift = check_sentinel(duties); !drift.empty()) link_.send_note(drift);
        const MeasureResult result = measure_alone(assigned);
        send_result(assigned.point, result);
      }
    }
  } catch (const Interrupted&) { interruption = why_stop(); }
  link_.wait_all_sent();
  if (interruption.empty()) return interruption;
  // The point in hand is abandoned (no row: --resume measures it); rank 0 learns that nothing more
  // comes from this rank, and why.
  workers_.stop();
  link_.say_stopped(interruption);
  return interruption;
}

}  // namespace ks
