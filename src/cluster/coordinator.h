#pragma once
// Rank 0's part in a sweep: the work queue, the answers to the other ranks' requests, their results
// and notes streamed to the ResultSink, the ranks that fell silent (their points handed to the others),
// the slow ranks set aside, and the end of an interrupted run. It speaks to the other ranks through a
// CoordinatorLink (cluster/rank_messages.h); rank 0's own points it keeps for rank 0's loop
// (sweep_runner.cpp), which measures them between its looks at the others.
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/gang_communicators.h"
#include "cluster/rank_messages.h"
#include "cluster/sweep_runner.h"
#include "cluster/work_plan.h"
#include "cluster/work_queue.h"

namespace ks {

class Coordinator {
 public:
  // `ranks`: every rank's identity, rank 0's first; `own_gangs`: rank 0's gangs' communicators (a
  // gang whose communicator it lost gets a new one with its next point, as for the other ranks').
  Coordinator(const WorkPlan& plan, const RunOptions& options, const std::vector<RankIdentity>& ranks,
              CoordinatorLink& link, ResultSink& sink, GangCommunicators& own_gangs);

  // Before the loop: the slow ranks `set_aside` get no work under --exclude-slow, and the groups no
  // rank can run are recorded `skipped`.
  void start(const std::vector<int>& set_aside);
  // Every point has its row and every other rank was told there is no more work.
  bool finished() const;
  // Why another rank stopped the run (empty: none did): the run is interrupted.
  const std::string& stopped_by() const { return stopped_by_; }

  // Takes in what the other ranks sent and answers their requests; whether anything came.
  bool take_in();
  // What rank 0 does for the others between its looks at its own worker: takes in, counts silent
  // ranks as gone, tells parked ranks it is alive, and lets the sink flush. Whether anything came.
  bool serve();

  // Rank 0, free, asks the queue for work of its own (unless it holds some, waits, or none is left).
  void ask_for_own_work();
  // Rank 0's next point of its own, if it holds one.
  std::optional<Assigned> take_own();
  // The record of a point rank 0 measured itself.
  void record_own(RunRecord record, const nlohmann::json& protocol, const nlohmann::json& implementation);
  // A line for the log from rank 0 itself.
  void note(const std::string& line) { sink_.on_note(line); }

  // An interrupted run ends in order (rank 0's worker stopped first): see coordinator.cpp.
  void wind_down();
  const std::vector<SilentRank>& silent_ranks() const { return silent_; }

 private:
  using Clock = std::chrono::steady_clock;

  void take(FromRank message);
  void take_result(FromRank& message);
  void take_stopped(int rank, const std::string& why);
  void drop_silent_ranks();
  void take_back_points_of(int rank, const std::string& why);
  void hand_taken_back_to_idle();
  void hand_to(int rank, std::vector<Assigned> points);
  void release_idle_ranks();
  bool some_rank_can_take(const Point& point) const;
  std::vector<Assigned> taken_back_for(int rank);
  void tell_parked_ranks();
  void record_unrunnable();
  void exclude_slow_ranks(const std::vector<int>& set_aside);
  bool is_silent(int rank) const;
  void finish(int rank);
  std::vector<Assigned> points_of(const Handout& handout) const;
  void hand_out(const std::vector<Handout>& handouts);
  void note_lost_communicators(const std::vector<std::vector<int>>& member_sets);

  const WorkPlan& plan_;
  const RunOptions& options_;
  std::vector<RankIdentity> ranks_;
  CoordinatorLink& link_;
  ResultSink& sink_;
  GangCommunicators& own_gangs_;
  WorkQueue queue_;
  const std::uint64_t expected_;  // the rows the run makes
  std::size_t received_ = 0;
  int ranks_finished_ = 0;
  // The other ranks: when each was last heard from, the points each holds (handed out, no result
  // yet), whether each was told there is no more work, and those that fell silent.
  std::vector<Clock::time_point> last_heard_;
  std::vector<std::deque<Assigned>> in_hand_;
  std::vector<bool> finished_;
  std::vector<SilentRank> silent_;
  // The generation of each gang's communicator, one more each time a member lost it.
  std::map<std::vector<int>, std::uint32_t> gang_generations_;
  Clock::time_point parked_told_ = Clock::now();
  // Rank 0's own work: points handed to it, whether it waits for a gang, whether nothing is left.
  std::deque<Assigned> mine_;
  bool root_waiting_ = false;
  bool root_exhausted_ = false;
  // An interrupted run: no more work is handed out; `stopped_by_` is why another rank stopped (it
  // stops the whole run).
  bool winding_down_ = false;
  std::string stopped_by_;
  std::set<int> excluded_;  // slow ranks given no work (--exclude-slow)
  // Ranks that asked when nothing was left for them: they hear "no more work" only once every result
  // is in, and until then stay in touch (their heartbeats, rank 0's word that it is alive), so that
  // one that stops meanwhile is seen, named and left behind as any other, and they can take the
  // points of a rank that stopped.
  std::set<int> idle_;
  // Points a silent rank held, handed again to the next ranks that ask (rank 0 among them) before
  // the queue's own.
  std::deque<Assigned> taken_back_;
};

}  // namespace ks
