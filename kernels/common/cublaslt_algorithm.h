#pragma once
// The fastest of cuBLASLt's top heuristic algorithms for one matmul, chosen by timing them at setup
// (never in a measurement): cuBLASLt's first candidate alone was measured 8 % and 17 % slower than
// torch.matmul at 4096³ and 8192³ bf16 on an H200 (bench/results/gemm-h200.md). Include from .cu
// files.
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "kernels/common/cublas.h"

namespace ks {

inline constexpr int kMatmulCandidates = 8;  // heuristic candidates timed at setup

// cuBLASLt's top heuristic algorithms that it marks usable, in its order. (A plain array: nvcc 13
// fails internally on a std::vector of cublasLtMatmulHeuristicResult_t.)
struct MatmulCandidates {
  cublasLtMatmulAlgo_t algo[kMatmulCandidates];
  int count = 0;
};

// D = op(A)·op(B) + C as `matmul` and the layouts describe it, with a workspace of
// kCublasWorkspaceBytes; throws naming `what` when cuBLASLt has no algorithm for it.
inline MatmulCandidates matmul_candidates(cublasLtHandle_t handle, cublasLtMatmulDesc_t matmul,
                                          cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                          cublasLtMatrixLayout_t d, const std::string& what) {
  const MatmulPreference preference = workspace_preference();
  int found = 0;
  cublasLtMatmulHeuristicResult_t results[kMatmulCandidates] = {};
  KS_CUBLAS(
      cublasLtMatmulAlgoGetHeuristic(handle, matmul, a, b, c, d, preference.get(), kMatmulCandidates, results, &found));
  MatmulCandidates usable;
  for (int i = 0; i < found; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) usable.algo[usable.count++] = results[i].algo;
  if (usable.count == 0) throw std::runtime_error(what + ": cublasLtMatmulAlgoGetHeuristic found no algorithm");
  return usable;
}

// The candidate whose call `multiply_with` enqueues on `stream` the fastest: the best of 5 calls
// after 2, each. A first candidate slower than `budget_ms` a call is kept without trying the others
// (the search would cost seconds).
inline cublasLtMatmulAlgo_t fastest_matmul(const MatmulCandidates& candidates, cudaStream_t stream,
                                           const std::function<void(const cublasLtMatmulAlgo_t&)>& multiply_with,
                                           float budget_ms = 25.0f) {
  constexpr int kWarmups = 2, kRepeats = 5;
  Event start, stop;
  const auto time_candidate = [&](const cublasLtMatmulAlgo_t& algo) {
    for (int i = 0; i < kWarmups; ++i) multiply_with(algo);
    float best = 0;
    for (int i = 0; i < kRepeats; ++i) {
      KS_CUDA(cudaEventRecord(start, stream));
      multiply_with(algo);
      KS_CUDA(cudaEventRecord(stop, stream));
      KS_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      KS_CUDA(cudaEventElapsedTime(&ms, start, stop));
      best = i == 0 ? ms : std::min(best, ms);
    }
    return best;
  };
  int best = 0;
  float best_ms = 0;
  for (int i = 0; i < candidates.count; ++i) {
    const float ms = time_candidate(candidates.algo[i]);
    if (i == 0 || ms < best_ms) best = i, best_ms = ms;
    if (i == 0 && ms > budget_ms) break;
  }
  return candidates.algo[best];
}

}  // namespace ks
