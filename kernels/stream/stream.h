#pragma once
// stream: the memory bandwidth a device sustains, as STREAM measures it: arrays far larger than the
// last-level cache, every element read or written once a call, fp32 elements.
//
//   copy:   a[i] = b[i]                 two arrays' bytes a call, no arithmetic
//   triad:  a[i] = b[i] + kScalar·c[i]   three arrays' bytes a call, 2 FLOPs an element
//
// STREAM's count: the bytes the kernel asks for, not the cache lines a CPU also reads before it
// writes them. b and c are generated from the point's seed (inputs.h), so a check recomputes any
// element of a without copying the inputs back. `kernelsweep calibrate` measures a device's memory
// bandwidth with this kernel.
#include <cstdint>
#include <functional>

#include "kernels/common/inputs.h"
#include "kernels/kernel.h"

namespace ks::stream {

enum class Op { copy, triad };
enum Array : std::uint64_t { kB = 1, kC = 2 };  // ids of the generated inputs

inline constexpr float kScalar = 3.0f;

struct Problem {
  Op op = Op::triad;
  std::int64_t elements = 0;  // of each array
  std::uint64_t seed = 0;

  explicit Problem(const Parameters& p);

  float b(std::uint64_t i) const { return counter_symmetric(seed, kB, i); }
  float c(std::uint64_t i) const { return counter_symmetric(seed, kC, i); }
};

// FLOPs and bytes of one call.
Work work(const Problem& p);

// Compares sampled elements of a (the first, the last and others spread over the array), read
// through `a`, with what the operation makes of b and c.
CheckResult check_sampled(const Problem& p, const std::function<float(std::int64_t)>& a);

}  // namespace ks::stream
