#include "cluster/coordinator.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "cluster/interruption.h"
#include "cluster/point_record.h"
#include "cluster/workers.h"
#include "common/point_id_set.h"

namespace ks {
namespace {

using namespace std::chrono_literals;

// How long rank 0 waits, once a run is interrupted, for the other ranks to say they stopped. They
// look for the word at least every kLongestMeasuringLook (rank_messages.h), so this is only reached
// by a rank that is stuck.
constexpr auto kWindDownLimit = std::chrono::seconds(30);

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

// The queue's view of the ranks: which have a GPU, where each runs.
WorkQueue make_queue(const WorkPlan& plan, const RunOptions& options, const std::vector<RankIdentity>& ranks) {
  std::vector<bool> rank_has_gpu;
  std::vector<std::string> rank_host;
  for (const auto& r : ranks) {
    rank_has_gpu.push_back(r.gpu_count > 0);
    rank_host.push_back(r.host.hostname);
  }
  return WorkQueue(
      plan.groups_to_measure(), [&plan](std::size_t group) { return plan.needs(group); }, rank_has_gpu, rank_host,
      options.schedule);
}

}  // namespace

Coordinator::Coordinator(const WorkPlan& plan, const RunOptions& options, const std::vector<RankIdentity>& ranks,
                         CoordinatorLink& link, ResultSink& sink, GangCommunicators& own_gangs)
    : plan_(plan),
      options_(options),
      ranks_(ranks),
      link_(link),
      sink_(sink),
      own_gangs_(own_gangs),
      queue_(make_queue(plan, options, ranks)),
      expected_(plan.to_measure()),
      last_heard_(ranks.size(), Clock::now()),
      in_hand_(ranks.size()),
      finished_(ranks.size(), false) {}

// A stop while the workers started leaves ranks that look as if they had no GPU: nothing is
// recorded skipped for that.
void Coordinator::start(const std::vector<int>& set_aside) {
  exclude_slow_ranks(set_aside);
  if (!stop_requested()) record_unrunnable();
}

bool Coordinator::finished() const {
  return received_ >= expected_ && ranks_finished_ >= static_cast<int>(ranks_.size()) - 1;
}

// While the sink takes no records (its store is behind), the ranks' requests for work are still
// answered: granting points never waits on storing, and the results wait with MPI.
bool Coordinator::take_in() {
  bool served = false;
  while (auto message = link_.receive(sink_.takes_records())) {
    take(std::move(*message));
    served = true;
  }
  return served;
}

bool Coordinator::serve() {
  const bool served = take_in();
  drop_silent_ranks();
  if (received_ >= expected_) release_idle_ranks();
  tell_parked_ranks();
  sink_.on_tick();
  return served;
}

void Coordinator::take(FromRank message) {
  const int source = message.rank;
  // A rank counted as gone that speaks again gets nothing more, and what it sends is dropped:
  // its points were recorded already, and --resume measures them again.
  if (is_silent(source)) {
    if (message.kind == FromRank::Kind::work_request) link_.answer(source, {});  // no work: stop
    return;
  }
  last_heard_[source] = Clock::now();
  switch (message.kind) {
    case FromRank::Kind::work_request:
      note_lost_communicators(message.lost_gangs);
      if (winding_down_ || excluded_.count(source)) hand_out({Handout{source, {}, {}}});
      else if (auto again = taken_back_for(source); !again.empty()) hand_to(source, std::move(again));
      else hand_out(queue_.ask(source));
      break;
    case FromRank::Kind::result: take_result(message); break;
    case FromRank::Kind::stopped: take_stopped(source, message.text); break;
    case FromRank::Kind::note: sink_.on_note(message.text); break;
    case FromRank::Kind::heartbeat: break;
  }
}

void Coordinator::take_result(FromRank& message) {
  auto& held = in_hand_[message.rank];
  const PointKey key = point_key(message.record.point_id);
  const auto at =
      std::find_if(held.begin(), held.end(), [&](const Assigned& assigned) { return assigned.point.key == key; });
  if (at != held.end()) held.erase(at);
  sink_.on_record(std::move(message.record), *message.protocol, *message.implementation, std::move(message.documents));
  ++received_;
}

// Its results came before this (messages from one rank arrive in order); the points it still held
// have no row, and --resume measures them.
void Coordinator::take_stopped(int rank, const std::string& why) {
  finish(rank);
  if (stopped_by_.empty())
    stopped_by_ = fmt::format("rank {} on {} stopped ({})", rank, ranks_[rank].host.hostname, why);
}

void Coordinator::ask_for_own_work() {
  if (!mine_.empty() || root_waiting_) return;
  // What a silent rank held comes first, even once the queue has nothing more for rank 0.
  if (auto again = taken_back_for(0); !again.empty()) {
    for (Assigned& assigned : again) mine_.push_back(std::move(assigned));
    return;
  }
  if (root_exhausted_) return;
  root_waiting_ = true;
  hand_out(queue_.ask(0));
}

std::optional<Assigned> Coordinator::take_own() {
  if (mine_.empty()) return std::nullopt;
  Assigned assigned = std::move(mine_.front());
  mine_.pop_front();
  return assigned;
}

void Coordinator::record_own(RunRecord record, const Json& protocol, const Json& implementation) {
  sink_.on_record(std::move(record), protocol, implementation, std::nullopt);
  ++received_;
}

// The points of `groups` still to measure, made again from rank 0's plan, each with whether the
// worker checks it and, for a gang's, the generation of its communicator.
std::vector<Assigned> Coordinator::points_of(const Handout& handout) const {
  const auto generation = gang_generations_.find(handout.gang);
  const std::uint32_t of_gang = generation == gang_generations_.end() ? 0 : generation->second;
  std::vector<Assigned> out;
  for (std::size_t group : handout.groups) {
    bool first = true;
    for (Point& point : plan_.points_to_measure(group)) {
      const bool check = checks(options_.check, point, first);
      out.push_back({std::move(point), check, handout.gang, of_gang});
      first = false;
    }
  }
  return out;
}

// Sends each handout to its rank (rank 0's own to its list). A gang's point is in the hand of its
// first member, which records it; its members' handouts come one after another, and its points are
// made once for all of them.
void Coordinator::hand_out(const std::vector<Handout>& handouts) {
  note_lost_communicators(own_gangs_.take_lost());  // rank 0's own, from the gang points it measured
  const Handout* gang_made = nullptr;
  std::vector<Assigned> gang_points;
  for (const Handout& handout : handouts) {
    const bool same_gang =
        gang_made && !handout.gang.empty() && handout.gang == gang_made->gang && handout.groups == gang_made->groups;
    std::vector<Assigned> points = winding_down_ ? std::vector<Assigned>()
                                   : same_gang   ? gang_points
                                                 : points_of(handout);
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
    if (points.empty() && !winding_down_ && !excluded_.count(handout.rank)) {
      idle_.insert(handout.rank);  // told "no more work" at the end (release_idle_ranks)
      continue;
    }
    link_.answer(handout.rank, points);
    if (records)
      for (const Assigned& assigned : points) in_hand_[handout.rank].push_back(assigned);
    if (points.empty()) finish(handout.rank);
  }
}

// Taken-back points sent to a rank, and held as its in hand until their results come.
void Coordinator::hand_to(int rank, std::vector<Assigned> points) {
  link_.answer(rank, points);
  for (Assigned& assigned : points) in_hand_[rank].push_back(std::move(assigned));
}

// Every result is in: the ranks that waited for the end are told there is no more work.
void Coordinator::release_idle_ranks() {
  for (int rank : idle_) {
    link_.answer(rank, {});
    finish(rank);
  }
  idle_.clear();
}

// Points taken back from a silent rank go to the ranks waiting with nothing to do, if any can run them.
void Coordinator::hand_taken_back_to_idle() {
  for (auto it = idle_.begin(); it != idle_.end() && !taken_back_.empty();) {
    std::vector<Assigned> again = taken_back_for(*it);
    if (again.empty()) {
      ++it;
      continue;
    }
    hand_to(*it, std::move(again));
    it = idle_.erase(it);
  }
}

void Coordinator::finish(int rank) {
  if (finished_[rank]) return;
  finished_[rank] = true;
  ++ranks_finished_;
}

void Coordinator::note_lost_communicators(const std::vector<std::vector<int>>& member_sets) {
  for (const auto& members : member_sets) ++gang_generations_[members];
}

// Groups the queue found no ranks for (no GPU, a gang larger than the ranks left): recorded
// `skipped` with the reason, unless an earlier run recorded them so for a reason that still holds.
void Coordinator::record_unrunnable() {
  std::size_t left_skipped = 0;
  for (const auto& [group, reason] : queue_.take_unrunnable()) {
    for (const Point& point : plan_.points_to_measure(group)) {
      ++received_;
      if (!options_.retry_skipped && plan_.skipped_before(point)) {
        ++left_skipped;
        continue;
      }
      sink_.on_record(unmeasured_record(point, "skipped", reason), Json(), Json(), std::nullopt);
    }
  }
  if (left_skipped > 0) sink_.on_left_skipped(left_skipped);
}

// Ranks parked for a gang hear from rank 0 within their wait for work: it is alive, the gang not yet
// formed.
void Coordinator::tell_parked_ranks() {
  const auto now = Clock::now();
  if (now - parked_told_ < heartbeat_interval()) return;
  parked_told_ = now;
  for (int rank : queue_.parked())
    if (rank != 0) link_.tell_still_parked(rank);
  for (int rank : idle_) link_.tell_still_parked(rank);
}

// --exclude-slow: the slow ranks (ranks_to_set_aside) are given no work; the groups they would have
// measured go to the others (a gang that needs them all is recorded skipped, with why).
void Coordinator::exclude_slow_ranks(const std::vector<int>& set_aside) {
  if (!options_.exclude_slow) return;
  for (int rank : set_aside) {
    excluded_.insert(rank);
    hand_out(queue_.forget(rank));
    if (rank == 0) root_exhausted_ = true;
  }
}

bool Coordinator::is_silent(int rank) const {
  return std::any_of(silent_.begin(), silent_.end(), [&](const SilentRank& s) { return s.rank == rank; });
}

// Ranks not heard from within the silence limit are gone: the log names them, the points they held
// go to the other ranks, and the sweep goes on without them.
void Coordinator::drop_silent_ranks() {
  const auto now = Clock::now();
  for (int rank = 1; rank < static_cast<int>(ranks_.size()); ++rank) {
    if (finished_[rank] || is_silent(rank) || now - last_heard_[rank] < silence_limit()) continue;
    const double seconds = std::chrono::duration<double>(now - last_heard_[rank]).count();
    const std::string why = fmt::format("rank {} on {} stopped answering (nothing heard for {:.0f} s)", rank,
                                        ranks_[rank].host.hostname, seconds);
    // Silent before its points are taken back: it is no longer among the ranks that can take them.
    silent_.push_back(SilentRank{rank, ranks_[rank].host.hostname, 0, 0});
    idle_.erase(rank);
    ++ranks_finished_;
    take_back_points_of(rank, why);
    hand_taken_back_to_idle();
    hand_out(queue_.forget(rank));  // ranks parked for a gang it would have joined may go on
    record_unrunnable();
  }
}

// A silent rank's points in hand are measured by the others, where another rank that is still asking
// for work can run them; a gang's point (its members wait for one another) and a point no such rank
// can run are recorded `crashed` with the reason, and --resume measures them again. Whatever the
// silent rank sends should it wake is dropped (take), so no point is stored twice.
void Coordinator::take_back_points_of(int rank, const std::string& why) {
  SilentRank& silent = silent_.back();
  for (Assigned& assigned : in_hand_[rank]) {
    if (assigned.gang.empty() && some_rank_can_take(assigned.point)) {
      taken_back_.push_back(std::move(assigned));
      ++silent.points_handed_on;
      continue;
    }
    const bool on_gpu = needs_gpu(*options_.registry, assigned.point);
    const std::string message = why + "; the sweep went on without it, and --resume measures this point again";
    sink_.on_record(unmeasured_record(assigned.point, "crashed", message, ranks_[rank], on_gpu), Json(), Json(),
                    std::nullopt);
    ++received_;
    ++silent.points_recorded;
  }
  in_hand_[rank].clear();
  std::string note = fmt::format(
      "kernelsweep: {}: the sweep goes on without it; {} of the points it held go to the "
      "other ranks",
      why, silent.points_handed_on);
  if (silent.points_recorded > 0) note += fmt::format(", {} are recorded crashed", silent.points_recorded);
  sink_.on_note(note);
}

// Rank 0 always asks again (its loop runs to the end); another rank asks while it has not been told
// there is no more work. Either must be able to run the point: a GPU for a cuda implementation.
bool Coordinator::some_rank_can_take(const Point& point) const {
  const bool on_gpu = needs_gpu(*options_.registry, point);
  for (int rank = 0; rank < static_cast<int>(ranks_.size()); ++rank) {
    const bool asks = rank == 0 ? !excluded_.count(0) : !finished_[rank] && !is_silent(rank) && !excluded_.count(rank);
    if (asks && (!on_gpu || ranks_[rank].gpu_count > 0)) return true;
  }
  return false;
}

// The taken-back points `rank` can run, a share of them (as the queue's guided chunks: the ranks
// that ask next get the rest), for the next rank to ask.
std::vector<Assigned> Coordinator::taken_back_for(int rank) {
  if (taken_back_.empty() || excluded_.count(rank)) return {};
  const std::size_t asking = std::max<std::size_t>(1, ranks_.size() - silent_.size());
  const std::size_t share = std::max<std::size_t>(1, taken_back_.size() / asking);
  const bool has_gpu = ranks_[rank].gpu_count > 0;
  std::vector<Assigned> out;
  for (auto it = taken_back_.begin(); it != taken_back_.end() && out.size() < share;) {
    if (!has_gpu && needs_gpu(*options_.registry, it->point)) {
      ++it;
      continue;
    }
    out.push_back(std::move(*it));
    it = taken_back_.erase(it);
  }
  return out;
}

// An interrupted run ends in order: rank 0 has abandoned its point in hand; it tells the other ranks to
// stop, and takes in what they still send (results made before they heard, which are stored) until
// each has said it stopped. The job then ends as a finished one does, every rank together, with no
// rank aborted and none left running.
void Coordinator::wind_down() {
  winding_down_ = true;
  for (int rank : queue_.take_parked()) hand_out({Handout{rank, {}, {}}});  // ranks waiting for a gang
  release_idle_ranks();
  const int ranks = static_cast<int>(ranks_.size());
  for (int rank = 1; rank < ranks; ++rank)
    if (!finished_[rank] && !is_silent(rank)) link_.tell_stop(rank);
  const auto deadline = Clock::now() + kWindDownLimit;
  while (ranks_finished_ < ranks - 1 && Clock::now() < deadline) {
    take_in();
    drop_silent_ranks();
    sink_.on_tick();
    std::this_thread::sleep_for(200us);
  }
  for (int rank = 1; rank < ranks; ++rank)
    if (!finished_[rank] && !is_silent(rank))
      std::fprintf(stderr, "kernelsweep: rank %d did not stop within %lld s of the interruption\n", rank,
                   static_cast<long long>(kWindDownLimit.count()));
}

}  // namespace ks
