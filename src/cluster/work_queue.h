#pragma once
// Rank 0's queue of work: groups of points (the modes of one shape) handed to ranks as they ask.
//   dynamic: one shared queue in plan order; a request gets a guided chunk (a share of what is left,
//            shrinking to one group near the end), so fast ranks take more and the tail stays short.
//   static:  groups dealt round-robin to the capable ranks in advance (for comparison).
// A rank without a GPU is given only groups of cpu implementations.
//
// Gangs: a collective's group needs `size` ranks at once. It stays in the shared queue in plan order
// (under either schedule); a rank that asks while it is at the front waits there, parked, until
// enough capable ranks wait (on one node, for same-node placement), and the gang is handed out to
// them together. Ranks not parked keep their work meanwhile; groups behind the gang wait for it.
#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace ks {

enum class Schedule { dynamic, static_round_robin };

// What a group needs of the ranks that measure it.
struct GroupNeeds {
  bool gpu = false;
  bool collective = false;  // measured by a gang of ranks (one rank too), not by a worker
  int gang_size = 1;        // a collective's ranks
  bool same_node = false;   // a gang's ranks all on one host (else spread over as many hosts as there are)
};

// Work for one rank: `groups` to measure, with `gang` its fellow members (world ranks, ascending, itself
// among them) when the one group is a collective's. No groups: nothing is left for it.
struct Handout {
  int rank = 0;
  std::vector<std::size_t> groups;
  std::vector<int> gang;
};

class WorkQueue {
 public:
  // needs(g): what group g needs; rank_has_gpu[r], rank_host[r]: what rank r has and where it runs.
  using Needs = std::function<GroupNeeds(std::size_t group)>;
  WorkQueue(std::vector<std::size_t> groups, Needs needs, std::vector<bool> rank_has_gpu,
            std::vector<std::string> rank_host, Schedule schedule);

  // `rank` is free and asks for work: what can be handed out now, to it or to ranks parked before it
  // (none for it while it waits for a gang).
  std::vector<Handout> ask(int rank);
  // A rank that is gone: never handed work again. Gangs that can no longer be formed are taken out
  // (take_unrunnable), and the ranks parked for them are handed what follows.
  std::vector<Handout> forget(int rank);
  // The ranks waiting for a gang, no longer waiting (an interrupted run tells them there is no work).
  std::vector<int> take_parked();
  const std::deque<int>& parked() const { return parked_; }
  // Groups that no rank can run (cuda groups when no rank has a GPU; gangs larger than the capable
  // ranks, or than those of any one node for same-node placement), taken out of the queue, with why.
  struct Unrunnable {
    std::size_t group;
    std::string reason;
  };
  std::vector<Unrunnable> take_unrunnable();

 private:
  bool can_run(int rank, std::size_t group) const;
  // Why no rank can ever run the group (empty: some can): a single group at the start, a gang's at
  // the start and whenever a rank is gone.
  std::string why_never(std::size_t group) const;
  std::vector<Handout> dispatch();
  bool form_gang(std::vector<Handout>& out);
  std::vector<std::size_t> single_chunk(int rank);
  std::size_t chunk_size() const;

  bool is_gang(std::size_t group) const { return needs_(group).collective; }

  Needs needs_;
  std::vector<bool> rank_has_gpu_;
  std::vector<std::string> rank_host_;
  std::vector<bool> gone_;
  Schedule schedule_;
  bool any_gpu_;
  std::deque<std::size_t> shared_;                 // dynamic: every group; static: the gangs
  std::vector<std::deque<std::size_t>> per_rank_;  // static
  std::size_t gangs_queued_ = 0;                   // gang groups in shared_
  std::deque<int> parked_;                         // ranks waiting for the gang at the front, in order of asking
  std::vector<Unrunnable> unrunnable_;
  std::size_t remaining_ = 0;
  std::size_t capable_ranks_ = 0;
};

}  // namespace ks
