#pragma once
// How long a rank waits (for its worker's result, for rank 0's answer, for the other ranks at a
// collective step) before it looks at MPI again. Each look costs the rank tens of microseconds of
// CPU, and a rank shares its cores with the worker timing a point: mpirun binds a rank and its
// workers to one core when it starts two ranks or fewer. Looking every 200 us, rank 0 took 7% of
// that core (the other ranks, looking every millisecond, 3%): time taken from a CPU point, or from a
// GPU pass whose pace the host sets, while it was timed (bench/results/rank_cpu-cpu2.md).
// So a wait starts short after something happened (a request served, a result in), when more is
// likely to follow, and doubles with each look that finds nothing, up to a ceiling that bounds the
// delay it adds to an answer.
#include <algorithm>
#include <chrono>

namespace ks {

class PollInterval {
 public:
  using Duration = std::chrono::microseconds;

  PollInterval(Duration shortest, Duration longest)
      : shortest_(shortest), longest_(std::max(shortest, longest)), next_(shortest) {}

  Duration next() const { return next_; }

  // After a look: the next comes soon when it found something, twice as late (within the ceiling)
  // when it found nothing.
  void after_look(bool found_something) { next_ = found_something ? shortest_ : std::min(next_ * 2, longest_); }

 private:
  Duration shortest_, longest_, next_;
};

}  // namespace ks
