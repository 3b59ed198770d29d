// alltoall: member k sends its block j to member j, and receives member j's block k into its block j.
// nccl-tests: blocks of (bytes / size / n) elements rounded down to 16 bytes, n of them sent and
// received; algorithm bandwidth (n blocks' bytes) / time; bus factor (n-1)/n.
#include "kernels/nccl/collective.h"
#ifdef KERNELSWEEP_HAVE_NCCL
#include "kernels/nccl/nccl_call.h"
#endif

namespace ks::collective {
namespace {

const CollectiveSpec& alltoall() {
  static const CollectiveSpec spec{
      .name = "alltoall",
      .counts =
          [](std::size_t elements, std::size_t size, int members) {
            const std::size_t share = aligned_share(elements, size, members);
            const std::size_t all = share * static_cast<std::size_t>(members);
            return Counts{all, all, share, 0, 0};
          },
      .algorithm_bytes = [](const Counts& c, std::size_t size, int members) {
        return static_cast<double>(c.param * size) * members;
      },
      .bus_factor = all_to_all_factor,
      // Block j of member k came from member j's block k.
      .expected = [](std::size_t index, const Counts& c, const Setting& s) {
        const std::size_t from = index / c.param;
        return input_value(static_cast<std::size_t>(s.me) * c.param + index % c.param, static_cast<int>(from), s);
      },
      .start_mpi =
          [](const MpiCall& call, MPI_Request* request) {
            const int count = static_cast<int>(call.counts.param);
            MPI_Ialltoall(call.send ? call.send : MPI_IN_PLACE, count, call.type, call.recv, count, call.type, call.comm,
                          request);
          },
#ifdef KERNELSWEEP_HAVE_NCCL
      .start_nccl = [](const NcclCall& c) -> int { return ncclAlltoAll(c.send, c.recv, c.counts.param, c.type, c.comm, c.stream); },
#endif
  };
  return spec;
}
const CollectiveRegistrar registrar(alltoall());

}  // namespace
}  // namespace ks::collective

KS_COLLECTIVE_KERNEL(alltoall, "All-to-all",
                     "Member k of a gang sends its block j to member j, which keeps it as its block k.",
                     "MPI_Ialltoall", "ncclAlltoAll");
