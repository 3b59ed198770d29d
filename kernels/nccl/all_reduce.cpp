// all_reduce: every member ends with the reduction of every member's buffer.
// nccl-tests: count = bytes / size elements each; algorithm bandwidth bytes / time; bus factor 2(n-1)/n.
#include "kernels/nccl/collective_kernel.h"

namespace ks::collective {

const CollectiveSpec all_reduce_spec{
    .reduces = true,
    .counts = whole_message,
    .algorithm_bytes = count_bytes,
    .bus_factor = [](int members) { return 2.0 * (members - 1) / members; },
    .expected = [](std::size_t index, const Counts&, const Setting& s) { return reduced_input(index, s); },
    .start_mpi =
        [](const MpiCall& call, MPI_Request* request) {
          MPI_Iallreduce(call.send_or_in_place(), call.recv, call.count(), call.type, call.op, call.comm, request);
        },
    KS_START_NCCL(ncclAllReduce(c.send, c.recv, c.counts.param, c.type, c.op, c.comm, c.stream)),
};

}  // namespace ks::collective

KS_COLLECTIVE_KERNEL(all_reduce, "All-reduce", "MPI_Iallreduce", "ncclAllReduce",
                     "Every member of a gang ends with the reduction of all the members' buffers.");
