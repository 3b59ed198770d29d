#ifdef KERNELSWEEP_HAVE_NCCL
#include "kernels/nccl/nccl_call.h"

namespace ks::collective {

ncclDataType_t nccl_type(DataType type) {
  static constexpr ncclDataType_t kTypes[] = {ncclFloat32, ncclFloat64, ncclFloat16, ncclBfloat16,
                                              ncclInt32,   ncclInt64,   ncclInt8,    ncclUint8};  // DataType's order
  return kTypes[static_cast<std::size_t>(type)];
}

ncclRedOp_t nccl_op(ReduceOp op) {
  static constexpr ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};  // ReduceOp's order
  return kOps[static_cast<std::size_t>(op)];
}

}  // namespace ks::collective
#endif
