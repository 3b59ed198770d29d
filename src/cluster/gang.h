#pragma once
// A collective point measured by a gang of ranks at once (kernels/nccl/collective.h). The work queue
// hands the point to every member together; each member takes the gang's communicator (made from
// the world's on first use, kept for the next point of the same members: gang_communicators.h) and
// times the collective in the rank itself, as nccl-tests does:
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
#include <optional>
#include <stdexcept>
#include <vector>

#include "cluster/gang_communicators.h"
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
                                             GangCommunicators& communicators, Workers& workers,
                                             const std::function<void()>& while_waiting);

}  // namespace ks
