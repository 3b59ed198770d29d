#pragma once
// What gemm's CUDA implementations share: A and B generated on the device (the same values as
// make_matrix on the host), C, a workspace, the instance's stream, and the check that reads back only
// the entries it compares.
#include <cstdint>

#include "kernels/common/cublas.h"
#include "kernels/gemm/gemm.h"

namespace ks::gemm {

class DeviceOperands {
 public:
  explicit DeviceOperands(const Shape& s) : s(s) {
    a = memory.allocate_bytes(s.element_size() * static_cast<std::size_t>(s.m * s.k), "A");
    b = memory.allocate_bytes(s.element_size() * static_cast<std::size_t>(s.k * s.n), "B");
    c = memory.allocate_bytes(s.element_size() * static_cast<std::size_t>(s.m * s.n), "C");
    workspace = memory.allocate_bytes(kCublasWorkspaceBytes, "cuBLAS workspace");
    generate_symmetric(a, s.bf16, static_cast<std::uint64_t>(s.m * s.k), s.seed, kA, stream);
    generate_symmetric(b, s.bf16, static_cast<std::uint64_t>(s.k * s.n), s.seed, kB, stream);
    stream.synchronize();
  }

  cudaDataType_t type() const { return s.bf16 ? CUDA_R_16BF : CUDA_R_32F; }

  // Waits for the stream, then compares C with the reference; only the compared entries are copied
  // back, so checking a large product needs no large host buffer.
  CheckResult check() const {
    stream.synchronize();
    return check_entries(s, [this](std::int64_t row, std::int64_t col) {
      const char* entry = static_cast<const char*>(c) + s.element_size() * static_cast<std::size_t>(row * s.n + col);
      return static_cast<double>(download_floats(entry, 1, s.bf16)[0]);
    });
  }

  Shape s;
  DeviceMemory memory;
  Stream stream;
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
};

}  // namespace ks::gemm
