#include "cluster/work_queue.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace ks {
namespace {

constexpr std::size_t kMaxChunk = 64;
// A request takes about 1/(kGuidedShare · ranks) of what is left: large chunks early keep rank 0's
// message load low, single groups at the end keep the tail short.
constexpr std::size_t kGuidedShare = 8;

}  // namespace

WorkQueue::WorkQueue(std::vector<std::size_t> groups, Needs needs, std::vector<bool> rank_has_gpu,
                     std::vector<std::string> rank_host, Schedule schedule)
    : needs_(std::move(needs)),
      rank_has_gpu_(std::move(rank_has_gpu)),
      rank_host_(std::move(rank_host)),
      gone_(rank_has_gpu_.size(), false),
      schedule_(schedule),
      any_gpu_(std::find(rank_has_gpu_.begin(), rank_has_gpu_.end(), true) != rank_has_gpu_.end()) {
  rank_host_.resize(rank_has_gpu_.size());
  std::vector<std::size_t> runnable;
  for (std::size_t g : groups) {
    std::string why = why_never(g);
    if (why.empty()) runnable.push_back(g);
    else unrunnable_.push_back({g, std::move(why)});
  }
  remaining_ = runnable.size();
  capable_ranks_ = rank_has_gpu_.size();
  if (schedule_ == Schedule::static_round_robin) per_rank_.resize(rank_has_gpu_.size());
  std::vector<int> gpu_ranks;
  for (std::size_t r = 0; r < rank_has_gpu_.size(); ++r)
    if (rank_has_gpu_[r]) gpu_ranks.push_back(static_cast<int>(r));
  std::size_t cpu_turn = 0, gpu_turn = 0;
  for (std::size_t g : runnable) {
    const bool gang = is_gang(g);
    gangs_queued_ += gang ? 1 : 0;
    // The shared queue holds every group of the dynamic schedule, and the gangs of either: they are
    // formed as ranks free up.
    if (gang || schedule_ == Schedule::dynamic) {
      shared_.push_back(g);
      continue;
    }
    const int rank =
        needs_(g).gpu ? gpu_ranks[gpu_turn++ % gpu_ranks.size()] : static_cast<int>(cpu_turn++ % rank_has_gpu_.size());
    per_rank_[static_cast<std::size_t>(rank)].push_back(g);
  }
}

bool WorkQueue::can_run(int rank, std::size_t group) const {
  const auto r = static_cast<std::size_t>(rank);
  return !gone_[r] && (!needs_(group).gpu || rank_has_gpu_[r]);
}

std::string WorkQueue::why_never(std::size_t group) const {
  const GroupNeeds need = needs_(group);
  if (!need.collective) return !need.gpu || any_gpu_ ? "" : "no rank of this run has a GPU";
  std::map<std::string, int> per_host;
  int capable = 0;
  for (std::size_t r = 0; r < rank_has_gpu_.size(); ++r)
    if (can_run(static_cast<int>(r), group)) {
      ++capable;
      ++per_host[rank_host_[r]];
    }
  const char* with_gpu = need.gpu ? " with a GPU" : "";
  if (capable < need.gang_size)
    return fmt::format("group_size {} needs {} ranks{}; this run has {}", need.gang_size, need.gang_size, with_gpu,
                       capable);
  int most = 0;
  for (const auto& [host, count] : per_host) most = std::max(most, count);
  if (need.same_node && most < need.gang_size)
    return fmt::format(
        "group_size {} with placement same-node needs {} ranks{} on one node; this run has at most {} on one",
        need.gang_size, need.gang_size, with_gpu, most);
  return "";
}

std::size_t WorkQueue::chunk_size() const {
  return std::clamp<std::size_t>(remaining_ / (kGuidedShare * std::max<std::size_t>(1, capable_ranks_)), 1, kMaxChunk);
}

// Single groups from the front of the shared queue that `rank` can run, up to the first gang.
std::vector<std::size_t> WorkQueue::single_chunk(int rank) {
  std::vector<std::size_t> out;
  const std::size_t want = chunk_size();
  for (auto it = shared_.begin(); it != shared_.end() && out.size() < want && !is_gang(*it);) {
    if (!can_run(rank, *it)) {
      ++it;
      continue;
    }
    out.push_back(*it);
    it = shared_.erase(it);
  }
  remaining_ -= out.size();
  return out;
}

// The gang at the front from the parked ranks, when enough can run it: ranks other than 0 first (rank
// 0 also serves the queue), then in order of asking; same-node placement takes them from the first
// host that has enough, spread placement from each host in turn.
bool WorkQueue::form_gang(std::vector<Handout>& out) {
  const std::size_t group = shared_.front();
  const GroupNeeds need = needs_(group);
  std::vector<int> candidates;
  for (int rank : parked_)
    if (can_run(rank, group)) candidates.push_back(rank);
  std::stable_partition(candidates.begin(), candidates.end(), [](int rank) { return rank != 0; });
  std::vector<std::string> host_order;
  std::map<std::string, std::deque<int>> by_host;
  for (int rank : candidates) {
    const std::string& host = rank_host_[static_cast<std::size_t>(rank)];
    if (by_host[host].empty()) host_order.push_back(host);
    by_host[host].push_back(rank);
  }
  std::vector<int> members;
  if (need.same_node) {
    for (const std::string& host : host_order) {
      if (static_cast<int>(by_host[host].size()) < need.gang_size) continue;
      members.assign(by_host[host].begin(), by_host[host].begin() + need.gang_size);
      break;
    }
  } else {
    for (bool took = true; took && static_cast<int>(members.size()) < need.gang_size;) {
      took = false;
      for (const std::string& host : host_order) {
        auto& ranks = by_host[host];
        if (ranks.empty() || static_cast<int>(members.size()) == need.gang_size) continue;
        members.push_back(ranks.front());
        ranks.pop_front();
        took = true;
      }
    }
  }
  if (static_cast<int>(members.size()) < need.gang_size) return false;
  std::sort(members.begin(), members.end());
  for (int member : members) {
    out.push_back(Handout{member, {group}, members});
    parked_.erase(std::find(parked_.begin(), parked_.end(), member));
  }
  shared_.pop_front();
  --remaining_;
  --gangs_queued_;
  return true;
}

std::vector<Handout> WorkQueue::dispatch() {
  std::vector<Handout> out;
  for (;;) {
    while (!shared_.empty() && is_gang(shared_.front())) {
      std::string why = why_never(shared_.front());  // ranks gone since the start
      if (why.empty()) break;
      unrunnable_.push_back({shared_.front(), std::move(why)});
      shared_.pop_front();
      --remaining_;
      --gangs_queued_;
    }
    if (parked_.empty()) break;
    if (!shared_.empty() && is_gang(shared_.front())) {
      if (form_gang(out)) continue;
      break;  // the parked ranks wait for more
    }
    bool handed = false;
    for (auto it = parked_.begin(); it != parked_.end();) {
      std::vector<std::size_t> chunk = single_chunk(*it);
      if (chunk.empty()) {
        ++it;
        continue;
      }
      out.push_back(Handout{*it, std::move(chunk), {}});
      it = parked_.erase(it);
      handed = true;
    }
    if (handed) continue;
    // The ranks left cannot run the groups before the next gang: they wait for it, or, with no gang
    // ahead, nothing is left for them.
    if (gangs_queued_ == 0) {
      for (int rank : parked_) out.push_back(Handout{rank, {}, {}});
      parked_.clear();
    }
    break;
  }
  return out;
}

std::vector<Handout> WorkQueue::ask(int rank) {
  if (schedule_ == Schedule::static_round_robin) {
    auto& mine = per_rank_.at(static_cast<std::size_t>(rank));
    if (!mine.empty()) {
      const std::size_t n = std::min(mine.size(), kMaxChunk);
      Handout handout{rank, {mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(n)}, {}};
      mine.erase(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(n));
      remaining_ -= n;
      return {handout};
    }
  }
  if (gone_.at(static_cast<std::size_t>(rank))) return {Handout{rank, {}, {}}};
  parked_.push_back(rank);
  return dispatch();
}

std::vector<Handout> WorkQueue::forget(int rank) {
  const auto r = static_cast<std::size_t>(rank);
  gone_.at(r) = true;
  if (capable_ranks_ > 0) --capable_ranks_;
  parked_.erase(std::remove(parked_.begin(), parked_.end(), rank), parked_.end());
  if (!per_rank_.empty()) {  // what it was dealt goes to the others
    shared_.insert(shared_.begin(), per_rank_[r].begin(), per_rank_[r].end());
    per_rank_[r].clear();
  }
  return dispatch();
}

std::vector<int> WorkQueue::take_parked() {
  std::vector<int> out(parked_.begin(), parked_.end());
  parked_.clear();
  return out;
}

std::vector<WorkQueue::Unrunnable> WorkQueue::take_unrunnable() { return std::exchange(unrunnable_, {}); }

}  // namespace ks
