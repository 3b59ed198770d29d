#pragma once
// A gang member's worker measuring a collective point through NCCL on its GPU (the `nccl` and
// `nccl_graph` implementations of kernels/nccl). The member's rank hands it the point with its seat in
// the gang (cluster/gang.h); every member's worker runs the same steps at once:
//   1. the gang's communicator: made with the seat's NCCL id (ncclCommInitRankConfig, non-blocking,
//      so that the wait for the other members has the point's deadline) or the one kept for these
//      members since an earlier point;
//   2. device buffers for the point, the inputs written (nccl-tests' sizes and in-place offsets);
//      for nccl_graph, one call captured in a CUDA graph, which each call then launches;
//   3. one call (NCCL sets up its connections), then 5 calls timed together: one call's estimate,
//      the gang's largest taken by all through an all-reduce on the communicator, so that every
//      member makes the same number of calls;
//   4. do_bench's warm-up and repetition counts from it, the warm-up calls, then per repetition a
//      start event, the call, an end event: each sample is this member's GPU time of one call (the
//      rank takes each repetition's slowest member);
//   5. the check: inputs written afresh, one call, the received elements compared with the expected
//      values.
// Every wait polls the stream and the communicator's asynchronous error against the point's
// timeout: past it (a member died or stopped), the communicator is aborted (ncclCommAbort), the
// point is `timeout`, and the worker leaves so that the next point gets a fresh CUDA context.
#include <memory>
#include <string>

#include "cluster/worker_messages.h"

namespace ks {

class NcclMember {
 public:
  NcclMember();
  ~NcclMember();

  // A new ncclUniqueId, as hex: the gang's first member makes it and its rank sends it to the others.
  // NCCL's bootstrap listens in this process until the members have joined. Throws when kernelsweep
  // is built without NCCL or NCCL fails.
  std::string new_unique_id();
  // Measures request.point as member request.gang->me of request.gang->members.
  MeasureResult measure(const MeasureRequest& request);

 private:
  struct Communicators;
  std::unique_ptr<Communicators> communicators_;
};

}  // namespace ks
