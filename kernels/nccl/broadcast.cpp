// broadcast: every member ends with the root's buffer.
// nccl-tests: count = bytes / size elements; algorithm bandwidth bytes / time; bus factor 1.
#include "kernels/nccl/collective.h"
#ifdef KERNELSWEEP_HAVE_NCCL
#include "kernels/nccl/nccl_call.h"
#endif

namespace ks::collective {
namespace {

const CollectiveSpec& broadcast() {
  static const CollectiveSpec spec{
      .name = "broadcast",
      .rooted = true,
      .mpi_one_buffer = true,
      .counts = [](std::size_t elements, std::size_t, int) { return Counts{elements, elements, elements, 0, 0}; },
      .algorithm_bytes = [](const Counts& c, std::size_t size, int) { return static_cast<double>(c.param * size); },
      .bus_factor = [](int) { return 1.0; },
      .expected = [](std::size_t index, const Counts&, const Setting& s) { return input_value(index, s.root, s); },
      // MPI_Ibcast has one buffer: the root's input is its receive buffer, in place or not.
      .start_mpi =
          [](const MpiCall& call, MPI_Request* request) {
            MPI_Ibcast(call.recv, static_cast<int>(call.counts.param), call.type, call.root, call.comm, request);
          },
#ifdef KERNELSWEEP_HAVE_NCCL
      .start_nccl = [](const NcclCall& c) -> int { return ncclBroadcast(c.send, c.recv, c.counts.param, c.type, c.root, c.comm, c.stream); },
#endif
  };
  return spec;
}
const CollectiveRegistrar registrar(broadcast());

}  // namespace
}  // namespace ks::collective

KS_COLLECTIVE_KERNEL(broadcast, "Broadcast",
                     "Every member of a gang ends with the root member's buffer.",
                     "MPI_Ibcast", "ncclBroadcast");
