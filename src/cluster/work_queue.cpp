#include "cluster/work_queue.h"

#include <algorithm>
#include <utility>

namespace ks {
namespace {

constexpr std::size_t kMaxChunk = 64;
// A request takes about 1/(kGuidedShare · ranks) of what is left: large chunks early keep rank 0's
// message load low, single groups at the end keep the tail short.
constexpr std::size_t kGuidedShare = 8;

}  // namespace

WorkQueue::WorkQueue(std::vector<std::size_t> groups, std::vector<bool> needs_gpu, std::vector<bool> rank_has_gpu,
                     Schedule schedule)
    : needs_gpu_(std::move(needs_gpu)), rank_has_gpu_(std::move(rank_has_gpu)), schedule_(schedule) {
  const bool any_gpu = std::find(rank_has_gpu_.begin(), rank_has_gpu_.end(), true) != rank_has_gpu_.end();
  std::vector<std::size_t> runnable;
  for (std::size_t g : groups) (needs_gpu_[g] && !any_gpu ? unrunnable_ : runnable).push_back(g);
  remaining_ = runnable.size();
  capable_ranks_ = rank_has_gpu_.size();
  if (schedule_ == Schedule::dynamic) {
    shared_.assign(runnable.begin(), runnable.end());
    return;
  }
  per_rank_.resize(rank_has_gpu_.size());
  std::vector<int> gpu_ranks;
  for (std::size_t r = 0; r < rank_has_gpu_.size(); ++r)
    if (rank_has_gpu_[r]) gpu_ranks.push_back(static_cast<int>(r));
  std::size_t cpu_turn = 0, gpu_turn = 0;
  for (std::size_t g : runnable) {
    const int rank = needs_gpu_[g] ? gpu_ranks[gpu_turn++ % gpu_ranks.size()]
                                   : static_cast<int>(cpu_turn++ % rank_has_gpu_.size());
    per_rank_[static_cast<std::size_t>(rank)].push_back(g);
  }
}

std::size_t WorkQueue::chunk_size(int) const {
  return std::clamp<std::size_t>(remaining_ / (kGuidedShare * std::max<std::size_t>(1, capable_ranks_)), 1, kMaxChunk);
}

std::vector<std::size_t> WorkQueue::next(int rank) {
  std::vector<std::size_t> out;
  if (schedule_ == Schedule::static_round_robin) {
    auto& mine = per_rank_.at(static_cast<std::size_t>(rank));
    const std::size_t n = std::min(mine.size(), kMaxChunk);
    out.assign(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(n));
    mine.erase(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(n));
  } else {
    const std::size_t want = chunk_size(rank);
    const bool has_gpu = rank_has_gpu_.at(static_cast<std::size_t>(rank));
    for (auto it = shared_.begin(); it != shared_.end() && out.size() < want;) {
      if (needs_gpu_[*it] && !has_gpu) {
        ++it;
        continue;
      }
      out.push_back(*it);
      it = shared_.erase(it);
    }
  }
  remaining_ -= out.size();
  return out;
}

std::vector<std::size_t> WorkQueue::take_unrunnable() { return std::exchange(unrunnable_, {}); }

}  // namespace ks
