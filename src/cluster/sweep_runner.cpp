#include "cluster/sweep_runner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "cluster/coordinator.h"
#include "cluster/interruption.h"
#include "cluster/messaging.h"
#include "cluster/participant.h"
#include "cluster/rank_messages.h"
#include "cluster/worker_process.h"

namespace ks {
namespace {

using namespace std::chrono_literals;

// Rank 0's loop: between its looks at its own worker (a point of its own in hand) it serves the other
// ranks; a gang's point holds it until the gang is done, serving them meanwhile. Why the run stopped
// before its end, or an empty string.
std::string run_root(Participant& me, Coordinator& coordinator, int others) {
  coordinator.start(me.set_aside());
  // While rank 0's own worker starts (which may take a while), the others are still served.
  me.workers().set_waiting_hook([&] { coordinator.take_in(); });
  // Alone, rank 0 has only its own worker to wait for, and looks at the others (none) every 50 ms.
  PollInterval interval = others > 0 ? PollInterval(200us, kRootLongestLook) : PollInterval(50ms, 50ms);
  const std::function<void()> duties = [&] { coordinator.serve(); };
  Point current;
  std::string interruption;
  try {
    while (!coordinator.finished()) {
      if (stop_requested()) interruption = stop_reason();
      else if (!coordinator.stopped_by().empty()) interruption = coordinator.stopped_by();
      if (!interruption.empty()) break;
      if (!me.workers().busy()) {
        coordinator.ask_for_own_work();
        while (auto assigned = coordinator.take_own()) {
          if (!assigned->gang.empty()) {
            if (const auto result = me.measure_in_gang(*assigned, duties))
              coordinator.record_own(me.record_of(assigned->point, *result), result->protocol, result->implementation);
            continue;
          }
          if (const std::string drift = me.check_sentinel(duties); !drift.empty()) coordinator.note(drift);
          me.begin(*assigned);
          current = std::move(assigned->point);
          break;
        }
      }
      bool found = false;
      if (me.workers().busy()) {
        if (auto result = me.workers().poll(interval.next())) {
          coordinator.record_own(me.record_of(current, *result), result->protocol, result->implementation);
          found = true;
        }
      } else {
        std::this_thread::sleep_for(std::min<std::chrono::microseconds>(interval.next(), kIdleLongestLook));
      }
      found = coordinator.serve() || found;
      interval.after_look(found);
    }
  } catch (const Interrupted&) {  // a stop while this rank's worker started
    interruption = stop_reason();
  }
  me.workers().set_waiting_hook(nullptr);
  if (interruption.empty()) return interruption;
  me.workers().stop();  // its point in hand is abandoned
  coordinator.wind_down();
  return interruption;
}

// The ranks make their records' documents where rank 0's sink takes them, carrying the run's labels:
// those of the results file, which rank 0 alone reads (a resumed run's come from it).
void share_document_making(const MpiWorld& world, Participant& me, const ResultSink* sink) {
  const std::optional<RunLabels> labels = world.rank() == 0 ? sink->labels_of_rank_documents() : std::nullopt;
  const std::string shared = world.broadcast_from_root(labels ? labels_json(*labels) : std::string());
  if (world.rank() != 0 && !shared.empty()) me.make_documents(labels_from_json(shared));
}

}  // namespace

std::chrono::seconds collective_deadline() {
  return std::chrono::duration_cast<std::chrono::seconds>(
      2 * WorkerProcess::kStartAttempts * WorkerProcess::start_timeout() + 5 * silence_limit());
}

PlanOutcome measure_plan(const MpiWorld& world, const WorkPlan* plan, const ProtocolSpec& protocol,
                         const RunOptions& options, ResultSink* sink) {
  Participant me(world, protocol, options);
  const auto ranks = me.introduce(world.rank() == 0 && plan->any_in_python());
  share_document_making(world, me, sink);
  PlanOutcome outcome;
  if (world.rank() == 0) {
    sink->on_start(ranks);
    MpiCoordinatorLink link;
    Coordinator coordinator(*plan, options, ranks, link, *sink, me.gangs());
    outcome.interrupted = run_root(me, coordinator, world.size() - 1);
    outcome.silent_ranks = coordinator.silent_ranks();
  } else {
    outcome.interrupted = me.run();
  }
  me.workers().stop();
  return outcome;
}

std::vector<RankCalibration> calibrations_of(const std::vector<RankIdentity>& ranks) {
  std::vector<RankCalibration> out;
  for (const RankIdentity& rank : ranks)
    if (rank.calibration) out.push_back(*rank.calibration);
  return out;
}

Json to_json(const RankIdentity& r) {
  return {{"rank", r.rank},           {"local_rank", r.local_rank},
          {"gpu_count", r.gpu_count}, {"host", to_json(r.host)},
          {"gpu", to_json(r.gpu)},    {"problem", r.problem},
          {"python", r.python},       {"calibration", r.calibration ? to_json(*r.calibration) : Json()}};
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
  if (const auto it = j.find("calibration"); it != j.end() && !it->is_null())
    r.calibration = rank_calibration_from_json(*it);
  return r;
}

}  // namespace ks
