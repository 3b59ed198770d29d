#ifdef KERNELSWEEP_HAVE_NCCL
#include "kernels/nccl/nccl_call.h"

namespace ks::collective {

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
    case DataType::fp32: return ncclFloat32;
    case DataType::fp64: return ncclFloat64;
    case DataType::fp16: return ncclFloat16;
    case DataType::bf16: return ncclBfloat16;
    case DataType::int32: return ncclInt32;
    case DataType::int64: return ncclInt64;
    case DataType::int8: return ncclInt8;
    case DataType::uint8: return ncclUint8;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::avg: return ncclAvg;
  }
  return ncclSum;
}

}  // namespace ks::collective
#endif
