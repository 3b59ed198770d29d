// reduce_scatter: member k ends with block k of the reduction of every member's buffer.
// nccl-tests: a member sends n blocks of (bytes / size / n) elements rounded down to 16 bytes and
// receives one; algorithm bandwidth (sent bytes) / time; bus factor (n-1)/n.
#include "kernels/nccl/collective_kernel.h"

namespace ks::collective {

const CollectiveSpec reduce_scatter_spec{
    .reduces = true,
    .counts =
        [](std::size_t elements, std::size_t size, int members) {
          const std::size_t share = aligned_share(elements, size, members);
          return Counts{share * static_cast<std::size_t>(members), share, share, 0, share};
        },
    .algorithm_bytes = members_count_bytes,
    .bus_factor = all_to_all_factor,
    .expected = [](std::size_t index, const Counts& c,
                   const Setting& s) { return reduced_input(static_cast<std::size_t>(s.me) * c.param + index, s); },
    .start_mpi =
        [](const MpiCall& call, MPI_Request* request) {
          MPI_Ireduce_scatter_block(call.send_or_in_place(), call.recv, call.count(), call.type, call.op, call.comm,
                                    request);
        },
    KS_START_NCCL(ncclReduceScatter(c.send, c.recv, c.counts.param, c.type, c.op, c.comm, c.stream)),
};

}  // namespace ks::collective

KS_COLLECTIVE_KERNEL(reduce_scatter, "Reduce-scatter", "MPI_Ireduce_scatter_block", "ncclReduceScatter",
                     "Member k of a gang ends with block k of the reduction of all the members' buffers.");
