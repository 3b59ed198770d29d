#pragma once
// Rank 0's queue of work: groups of points (the modes of one shape) handed to ranks as they ask.
//   dynamic: one shared queue in plan order; a request gets a guided chunk (a share of what is left,
//            shrinking to one group near the end), so fast ranks take more and the tail stays short.
//   static:  groups dealt round-robin to the capable ranks in advance (for comparison).
// A rank without a GPU is given only groups of cpu implementations.
#include <cstddef>
#include <deque>
#include <vector>

namespace ks {

enum class Schedule { dynamic, static_round_robin };

class WorkQueue {
 public:
  // needs_gpu[g]: group g runs a cuda implementation; rank_has_gpu[r]: rank r has a GPU.
  WorkQueue(std::vector<std::size_t> groups, std::vector<bool> needs_gpu, std::vector<bool> rank_has_gpu,
            Schedule schedule);

  // The next groups for `rank`; empty when nothing is left that it can run.
  std::vector<std::size_t> next(int rank);
  std::size_t remaining() const { return remaining_; }
  // Groups that no rank can run (cuda groups when no rank has a GPU), taken out of the queue.
  std::vector<std::size_t> take_unrunnable();

 private:
  std::size_t chunk_size(int rank) const;
  std::vector<bool> needs_gpu_;
  std::vector<bool> rank_has_gpu_;
  Schedule schedule_;
  std::deque<std::size_t> shared_;                 // dynamic
  std::vector<std::deque<std::size_t>> per_rank_;  // static
  std::vector<std::size_t> unrunnable_;
  std::size_t remaining_ = 0;
  std::size_t capable_ranks_ = 0;
};

}  // namespace ks
