// alltoall: member k sends its block j to member j, and receives member j's block k into its block j.
// nccl-tests: blocks of (bytes / size / n) elements rounded down to 16 bytes, n of them sent and
// received; algorithm bandwidth (n blocks' bytes) / time; bus factor (n-1)/n.
#include "kernels/nccl/collective_kernel.h"

namespace ks::collective {

const CollectiveSpec alltoall_spec{
    .counts =
        [](std::size_t elements, std::size_t size, int members) {
          const std::size_t share = aligned_share(elements, size, members);
          const std::size_t all = share * static_cast<std::size_t>(members);
          return Counts{all, all, share, 0, 0};
        },
    .algorithm_bytes = members_count_bytes,
    .bus_factor = all_to_all_factor,
    // Block j of member k came from member j's block k.
    .expected =
        [](std::size_t index, const Counts& c, const Setting& s) {
          const std::size_t from = index / c.param;
          return input_value(static_cast<std::size_t>(s.me) * c.param + index % c.param, static_cast<int>(from), s);
        },
    .start_mpi =
        [](const MpiCall& call, MPI_Request* request) {
          MPI_Ialltoall(call.send_or_in_place(), call.count(), call.type, call.recv, call.count(), call.type, call.comm,
                        request);
        },
    KS_START_NCCL(ncclAlltoAll(c.send, c.recv, c.counts.param, c.type, c.comm, c.stream)),
};

}  // namespace ks::collective

KS_COLLECTIVE_KERNEL(alltoall, "All-to-all", "MPI_Ialltoall", "ncclAlltoAll",
                     "Member k of a gang sends its block j to member j, which keeps it as its block k.");
