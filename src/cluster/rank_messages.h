#pragma once
// What the ranks of a sweep say to one another inside its loop, as typed messages: a rank asks rank 0
// for work, rank 0 answers with points (none: no more work), the rank sends back each result, a line
// for the log, a heartbeat, and that it stopped; rank 0 tells a rank to stop, or that its gang is not
// formed yet. Rank 0 speaks through a CoordinatorLink, so that its side can run against ranks played
// in the same process; over MPI both sides are cluster/messaging.h. How often a rank looks for
// messages is PollInterval's to say.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernelindex/kernelindex.h"
#include "plan/point.h"
#include "record/run_record.h"

namespace ks {

// How long a rank waits (for its worker's result, for rank 0's answer, for the other ranks at a
// collective step) before it looks at MPI again. Each look costs the rank tens of microseconds of
// CPU, and a rank shares its cores with the worker timing a point: mpirun binds a rank and its
// workers to one core when it starts two ranks or fewer. Looking every 200 us, rank 0 took 7% of
// that core (the other ranks, looking every millisecond, 3%): time taken from a CPU point, or from a
// GPU pass whose pace the host sets, while it was timed (bench/results/rank_cpu-cpu2.md).
// So a wait starts short after something happened (a request served, a result in), when more is
// likely to follow, and doubles with each look that finds nothing, up to a ceiling that bounds the
// delay it adds to an answer.
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

// How long rank 0 waits without a word from a rank before it counts the rank as gone
// (KERNELSWEEP_RANK_SILENCE_TIMEOUT seconds, 60 unless set); the ranks send a heartbeat four times
// within it.
inline std::chrono::steady_clock::duration silence_limit() {
  using Duration = std::chrono::steady_clock::duration;
  static const Duration limit = [] {
    const char* value = std::getenv("KERNELSWEEP_RANK_SILENCE_TIMEOUT");
    const double seconds = value ? std::atof(value) : 0;
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds > 0 ? seconds : 60));
  }();
  return limit;
}
inline std::chrono::steady_clock::duration heartbeat_interval() { return silence_limit() / 4; }

// The ceilings of a rank's waits between looks at the messages (PollInterval). Rank 0's bounds how
// long a rank asking for work waits for its answer: 5 ms while rank 0's own worker times a point, 1 ms
// while it has none (at the end of a sweep, when the points handed out are small and many ranks
// ask). A rank waiting for its own answer looks as often, its worker being idle meanwhile. A rank
// whose worker measures looks only for a stop from rank 0 and to keep its heartbeat, unless a result
// of its own is still on its way (MPI moves a large one only while its sender looks).
// kIdleLongestLook: rank 0 without a point of its own, and a rank waiting for rank 0's answer.
constexpr auto kRootLongestLook = std::chrono::microseconds(5000);
constexpr auto kIdleLongestLook = std::chrono::microseconds(1000);
constexpr auto kLongestMeasuringLook = std::chrono::microseconds(20'000);
constexpr auto kSendingMeasuringLook = std::chrono::microseconds(1000);

// A point handed to a rank: the ranks other than 0 hold no plan, so the point travels whole, with
// whether it is checked, and for a collective the gang that measures it together.
struct Assigned {
  Point point;
  bool check = false;
  std::vector<int> gang;
  std::uint32_t generation = 0;  // of the gang's communicator (GangCommunicators::of)
};

// A message from a rank to rank 0.
struct FromRank {
  enum class Kind { work_request, result, note, heartbeat, stopped };
  Kind kind = Kind::heartbeat;
  int rank = 0;
  std::vector<std::vector<int>> lost_gangs;  // work_request: the gangs' communicators it lost since it last asked
  // result: the record, the protocol it was timed with and the implementation's provenance (null when
  // none), these two held by the link until its next receive (results repeat them: parsed once).
  RunRecord record;
  const nlohmann::json* protocol = nullptr;
  const nlohmann::json* implementation = nullptr;
  std::optional<RecordDocuments> documents;  // result: the record's documents, where its rank made them
  std::string text;                          // note: the line; stopped: why
};

// Rank 0's side of the messages.
class CoordinatorLink {
 public:
  virtual ~CoordinatorLink() = default;
  // The next message that arrived from any rank; none when nothing is waiting. Without `results`, only
  // requests for work and heartbeats: the rest (results, and what follows them from a rank: notes,
  // that it stopped) waits where it is, with MPI.
  virtual std::optional<FromRank> receive(bool results) = 0;
  // The answer to `rank`'s request: its next points, or none (no more work).
  virtual void answer(int rank, const std::vector<Assigned>& points) = 0;
  // The run is interrupted: the rank abandons its point in hand.
  virtual void tell_stop(int rank) = 0;
  // The rank's gang is not formed yet, or nothing is left for it while the others finish: it keeps
  // waiting for its answer.
  virtual void tell_still_parked(int rank) = 0;
};

}  // namespace ks
