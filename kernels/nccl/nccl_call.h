#pragma once
// One call of a collective through NCCL: what a CollectiveSpec's start_nccl takes. Only where
// kernelsweep is built with NCCL (KERNELSWEEP_HAVE_NCCL).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "kernels/nccl/collective.h"

namespace ks::collective {

// In place, `send` points into `recv` at the member's offset (Counts::send_in_place_offset), as NCCL
// wants it.
struct NcclCall : CollectiveCall<ncclDataType_t, ncclRedOp_t, ncclComm_t> {
  cudaStream_t stream = nullptr;
};

ncclDataType_t nccl_type(DataType type);
ncclRedOp_t nccl_op(ReduceOp op);

}  // namespace ks::collective
