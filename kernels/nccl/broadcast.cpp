// broadcast: every member ends with the root's buffer.
// nccl-tests: count = bytes / size elements; algorithm bandwidth bytes / time; bus factor 1.
#include "kernels/nccl/collective_kernel.h"

namespace ks::collective {

const CollectiveSpec broadcast_spec{
    .rooted = true,
    .mpi_one_buffer = true,
    .counts = whole_message,
    .algorithm_bytes = count_bytes,
    .bus_factor = [](int) { return 1.0; },
    .expected = [](std::size_t index, const Counts&, const Setting& s) { return input_value(index, s.root, s); },
    // MPI_Ibcast has one buffer: the root's input is its receive buffer, in place or not.
    .start_mpi =
        [](const MpiCall& call, MPI_Request* request) {
          MPI_Ibcast(call.recv, call.count(), call.type, call.root, call.comm, request);
        },
    KS_START_NCCL(ncclBroadcast(c.send, c.recv, c.counts.param, c.type, c.root, c.comm, c.stream)),
};

}  // namespace ks::collective

KS_COLLECTIVE_KERNEL(broadcast, "Broadcast", "MPI_Ibcast", "ncclBroadcast",
                     "Every member of a gang ends with the root member's buffer.");
