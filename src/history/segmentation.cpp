#include "history/segmentation.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>

namespace ks::history {
namespace {

// The L1 cost of a growing set of values about its median, in O(log n) a value: the lower half in a
// max-heap, the upper half in a min-heap (the lower one holds the middle value of an odd count), and
// the sum of each. The deviations from the median m are sum(upper) - |upper| m + |lower| m - sum(lower),
// which is sum(upper) - sum(lower), plus m when the count is odd.
class RunningL1Cost {
 public:
  void clear() {
    lower_.clear();
    upper_.clear();
    lower_sum_ = upper_sum_ = 0;
  }

  void add(double value) {
    if (lower_.empty() || value <= lower_.front()) push(lower_, lower_sum_, value, std::less<>());
    else push(upper_, upper_sum_, value, std::greater<>());
    if (lower_.size() > upper_.size() + 1)
      push(upper_, upper_sum_, pop(lower_, lower_sum_, std::less<>()), std::greater<>());
    else if (upper_.size() > lower_.size())
      push(lower_, lower_sum_, pop(upper_, upper_sum_, std::greater<>()), std::less<>());
  }

  double cost() const {
    const bool odd = lower_.size() > upper_.size();
    return upper_sum_ - lower_sum_ + (odd ? lower_.front() : 0.0);
  }

 private:
  template <class Order> static void push(std::vector<double>& heap, double& sum, double value, Order order) {
    heap.push_back(value);
    std::push_heap(heap.begin(), heap.end(), order);
    sum += value;
  }
  template <class Order> static double pop(std::vector<double>& heap, double& sum, Order order) {
    std::pop_heap(heap.begin(), heap.end(), order);
    const double value = heap.back();
    heap.pop_back();
    sum -= value;
    return value;
  }

  std::vector<double> lower_, upper_;  // max-heap, min-heap
  double lower_sum_ = 0, upper_sum_ = 0;
};

}  // namespace

double absolute_deviation_cost(std::span<const double> values) {
  RunningL1Cost cost;
  for (double value : values) cost.add(value);
  return cost.cost();
}

std::vector<std::size_t> optimal_segmentation(std::span<const double> values, double penalty, std::size_t min_length) {
  if (min_length == 0) throw std::invalid_argument("a segment must be at least one value long");
  const std::size_t n = values.size();
  if (n < 2 * min_length) return {0};
  constexpr double kUnreachable = std::numeric_limits<double>::infinity();
  // least[i]: the least cost of values [0, i); start[i]: where its last segment starts.
  std::vector<double> least(n + 1, kUnreachable);
  std::vector<std::size_t> start(n + 1, 0);
  least[0] = 0;
  RunningL1Cost segment;
  for (std::size_t end = min_length; end <= n; ++end) {
    segment.clear();
    for (std::size_t j = end; j-- > 0;) {
      segment.add(values[j]);
      if (end - j < min_length || least[j] == kUnreachable) continue;
      const double cost = least[j] + segment.cost() + (j > 0 ? penalty : 0.0);
      if (cost <= least[end]) {  // on a tie the earlier boundary wins (j falls)
        least[end] = cost;
        start[end] = j;
      }
    }
  }
  std::vector<std::size_t> starts;
  for (std::size_t end = n; end > 0; end = start[end]) starts.push_back(start[end]);
  std::reverse(starts.begin(), starts.end());
  return starts;
}

}  // namespace ks::history
