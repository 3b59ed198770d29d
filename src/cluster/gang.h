#pragma once
// A collective point measured by a gang of ranks at once (kernels/nccl/collective.h). The work queue
// hands the point to every member together; each member takes the gang's communicator (made from
// MPI_COMM_WORLD on first use, kept for the next point of the same members) and times the collective
// in the rank itself, as nccl-tests does:
//   1. a barrier, then 5 calls timed together: one call's estimate, the gang's largest taken by all,
//      so that every member makes the same number of calls;
//   2. warm-up and repetition counts from it, as do_bench makes them;
//   3. n_warmup calls; then per repetition a barrier, the start mark, the call, the end mark;
//   4. each repetition's time is the largest over the members (nccl-tests' time is its slowest
//      rank's), gathered on the gang's first member, which records the point;
//   5. the check: every member's inputs written afresh, one call, every received element compared
//      with the expected value; the wrong elements summed over the gang (nccl-tests' -c).
// No cache flush: nccl-tests times without one. Every MPI call is non-blocking and waited for with
// the point's timeout, so a member that stops cannot hold the others: they record `timeout` and
// never use that communicator again; the gang's next point comes with a new generation of it
// (GangCommunicators::take_lost).
//
// The nccl implementations run in the members' workers, on their GPUs (cluster/nccl_member.h):
//   1. the members agree, over the gang's MPI communicator, whether every worker keeps an NCCL
//      communicator for these members; if one does not, the first member's worker makes an NCCL id
//      and the rank broadcasts it, and every worker makes the communicator anew;
//   2. each member's worker measures (steps 1 to 5 above, with CUDA events and NCCL's calls);
//   3. the ranks gather the outcome: the worst status over the gang, each repetition's slowest
//      member, the wrong elements summed, on the first member, which records the point.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "cluster/worker_messages.h"
#include "cluster/workers.h"
#include "config/sweep_spec.h"
#include "measure/protocol.h"
#include "plan/point.h"

namespace ks {

// The point's deadline passed while the gang worked: a member died, stopped or is far behind.
struct GangTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class GangCommunicators {
 public:
  GangCommunicators() = default;
  GangCommunicators(const GangCommunicators&) = delete;
  GangCommunicators& operator=(const GangCommunicators&) = delete;
  ~GangCommunicators();

  // Takes the copy of MPI_COMM_WORLD (MpiWorld::duplicate_world, made by every rank together before
  // the sweep) that the gangs' communicators are made from, so that making them never meets the
  // run's own messages.
  void open(MPI_Comm parent) { parent_ = parent; }
  // The communicator of `members` (world ranks, ascending) in `generation`: every member asks for it
  // at the same time, with the generation rank 0 handed out with the point. Made anew, by all members
  // together, when the one held is of an earlier generation; MPI_COMM_NULL when this rank lost it in
  // this generation.
  MPI_Comm of(const std::vector<int>& members, std::uint32_t generation);
  // Lost: an operation on it did not complete here. It is never used again, nor freed (MPI may still
  // be busy with it); `in_flight`, the memory of the operations left unfinished, is kept for the rest
  // of the process, for the same reason.
  void abandon(const std::vector<int>& members, std::vector<std::shared_ptr<void>> in_flight);
  // The member sets whose communicators this rank lost since the last call. A timeout need not reach
  // every member (a member stopped just before the gang's last operation may find it completed when it
  // resumes, and keep the communicator the others left), so each rank tells rank 0, which starts a new
  // generation of the set before handing out its next point: all of its members then make a new
  // communicator together, where a member that kept the old one would wait on it alone, or pair its
  // next point with another's.
  std::vector<std::vector<int>> take_lost();

 private:
  struct Held {
    MPI_Comm comm = MPI_COMM_NULL;
    std::uint32_t generation = 0;
    bool lost = false;
  };
  MPI_Comm parent_ = MPI_COMM_NULL;
  std::map<std::vector<int>, Held> held_;
  std::vector<std::vector<int>> lost_since_taken_;
};

// A gang's member sets as bytes (common/bytes.h), as a rank's request for work carries the ones it
// lost; and back.
std::string encode_member_sets(const std::vector<std::vector<int>>& sets);
std::vector<std::vector<int>> decode_member_sets(std::string_view bytes);

// A collective's statistics from its samples, and its bus bandwidth (nccl-tests' busbw) at their
// median: of a member's own timing, and on the gang's first member of the slowest member's samples.
void summarize_collective(RunRecord& record, double bus_factor);

// A collective's record from its timing: counts, statistics, samples, the algorithm bandwidth's
// bytes and the bus bandwidth.
void record_collective_timing(RunRecord& record, Timing timing, double algorithm_bytes, double bus_factor);

// Measures `point` on this rank as a member of `members` (through `workers` for the nccl
// implementations), on the gang's communicator of `generation`. Returns the result on the gang's
// first member (its record, the protocol it was timed with), nothing on the others. `while_waiting`
// is called about every millisecond while MPI or a worker works (the rank's heartbeats, rank 0's
// queue).
std::optional<MeasureResult> measure_in_gang(const Point& point, const std::vector<int>& members,
                                             std::uint32_t generation, bool check, const ProtocolSpec& protocol,
                                             GangCommunicators& communicators,
                                             Workers& workers, const std::function<void()>& while_waiting);

}  // namespace ks
