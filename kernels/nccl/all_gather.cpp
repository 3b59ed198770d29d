// all_gather: every member ends with every member's buffer, side by side in member order.
// nccl-tests: a member sends (bytes / size / n) elements rounded down to 16 bytes and receives n
// times that; algorithm bandwidth (received bytes) / time; bus factor (n-1)/n.
#include "kernels/nccl/collective_kernel.h"

namespace ks::collective {

const CollectiveSpec all_gather_spec{
    .counts =
        [](std::size_t elements, std::size_t size, int members) {
          const std::size_t share = aligned_share(elements, size, members);
          return Counts{share, share * static_cast<std::size_t>(members), share, share, 0};
        },
    .algorithm_bytes = members_count_bytes,
    .bus_factor = all_to_all_factor,
    // Element j of member q's slot is q's input element j.
    .expected = [](std::size_t index, const Counts& c,
                   const Setting& s) { return input_value(index % c.param, static_cast<int>(index / c.param), s); },
    .start_mpi =
        [](const MpiCall& call, MPI_Request* request) {
          MPI_Iallgather(call.send_or_in_place(), call.count(), call.type, call.recv, call.count(), call.type,
                         call.comm, request);
        },
    KS_START_NCCL(ncclAllGather(c.send, c.recv, c.counts.param, c.type, c.comm, c.stream)),
};

}  // namespace ks::collective

KS_COLLECTIVE_KERNEL(all_gather, "All-gather", "MPI_Iallgather", "ncclAllGather",
                     "Every member of a gang ends with all the members' buffers, in member order.");
