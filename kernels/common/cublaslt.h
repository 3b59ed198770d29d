#pragma once
// cuBLASLt products as the CUDA implementations make them: a handle, one product's descriptor and
// layouts owned together (LtProduct), and a product on fixed buffers run with the fastest of
// cuBLASLt's top heuristic algorithms, chosen by timing them at setup, never in a measurement
// (FastestMatmul): cuBLASLt's first candidate alone was measured 8 % and 17 % slower than
// torch.matmul at 4096³ and 8192³ bf16 on an H200 (bench/results/gemm-h200.md). Include from .cu
// files.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/common/cublas.h"

namespace ks {

using LtHandle = Owned<cublasLtHandle_t, cublasLtDestroy>;

inline LtHandle make_lt_handle() {
  cublasLtHandle_t handle = nullptr;
  KS_CUBLAS(cublasLtCreate(&handle));
  return LtHandle(handle);
}

// A matrix as cuBLASLt reads it: column-major, rows × cols as stored (before op), leading dimension ld.
struct LtMatrix {
  cudaDataType_t type;
  std::int64_t rows, cols, ld;
};

// The descriptor and layouts of one product D = alpha·op(A)·op(B) + beta·C with C = D, destroyed with
// their owner.
class LtProduct {
 public:
  LtProduct(cublasComputeType_t compute, cudaDataType_t scale, cublasOperation_t op_a, cublasOperation_t op_b,
            const LtMatrix& a, const LtMatrix& b, const LtMatrix& d)
      : scale_(scale), a_(layout(a)), b_(layout(b)), d_(layout(d)) {
    cublasLtMatmulDesc_t desc = nullptr;
    KS_CUBLAS(cublasLtMatmulDescCreate(&desc, compute, scale));
    desc_.reset(desc);
    set(CUBLASLT_MATMUL_DESC_TRANSA, op_a);
    set(CUBLASLT_MATMUL_DESC_TRANSB, op_b);
  }

  cudaDataType_t scale() const { return scale_; }

  // Sets an attribute of the descriptor: its epilogue, its bias, ...
  template <class Value> void set(cublasLtMatmulDescAttributes_t attribute, const Value& value) const {
    KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc_.get(), attribute, &value, sizeof value));
  }

  // cuBLASLt's heuristic: up to `count` algorithms for this product, best first, with a workspace of
  // kCublasWorkspaceBytes and, unless `alignment` is 0, every operand aligned to `alignment` bytes.
  cublasStatus_t heuristic(cublasLtHandle_t handle, int count, cublasLtMatmulHeuristicResult_t* results, int* found,
                           std::uint32_t alignment = 0) const {
    cublasLtMatmulPreference_t raw = nullptr;
    KS_CUBLAS(cublasLtMatmulPreferenceCreate(&raw));
    const Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> preference(raw);
    const std::uint64_t workspace = kCublasWorkspaceBytes;
    KS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                   sizeof workspace));
    if (alignment != 0)
      for (auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                             CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        KS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(raw, attribute, &alignment, sizeof alignment));
    return cublasLtMatmulAlgoGetHeuristic(handle, desc_.get(), a_.get(), b_.get(), d_.get(), d_.get(), raw, count,
                                          results, found);
  }

  // Enqueues the product on `stream` with algorithm `algo` and a workspace of kCublasWorkspaceBytes.
  void run(cublasLtHandle_t handle, const cublasLtMatmulAlgo_t& algo, const void* alpha, const void* a, const void* b,
           const void* beta, void* d, void* workspace, cudaStream_t stream) const {
    KS_CUBLAS(cublasLtMatmul(handle, desc_.get(), alpha, a, a_.get(), b, b_.get(), beta, d, d_.get(), d, d_.get(),
                             &algo, workspace, kCublasWorkspaceBytes, stream));
  }

 private:
  using Layout = Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
  static Layout layout(const LtMatrix& matrix) {
    cublasLtMatrixLayout_t raw = nullptr;
    KS_CUBLAS(cublasLtMatrixLayoutCreate(&raw, matrix.type, matrix.rows, matrix.cols, matrix.ld));
    return Layout(raw);
  }

  cudaDataType_t scale_;
  Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> desc_;
  Layout a_, b_, d_;
};

// One product on fixed device buffers, alpha 1 and beta 0 in its scale type, enqueued on the
// operands' stream with the fastest of cuBLASLt's top heuristic algorithms.
class FastestMatmul {
 public:
  struct Operands {
    const void *a, *b;
    void *d, *workspace;
    cudaStream_t stream;
  };

  // Times the candidates on the operands; `what` names the product in the error thrown when cuBLASLt
  // has no algorithm for it.
  FastestMatmul(LtProduct product, const Operands& operands, const std::string& what)
      : handle_(make_lt_handle()), product_(std::move(product)), operands_(operands), algorithm_(fastest(what)) {}

  void run() const { run_with(algorithm_); }

 private:
  static constexpr int kCandidates = 8;  // of cuBLASLt's heuristic, timed at setup
  static constexpr float kBudgetMs = 25.0f;

  // The fastest of the candidates cuBLASLt marks usable. A first one slower than kBudgetMs a call is
  // kept without trying the others (the search would cost seconds). (A plain array: nvcc 13 fails
  // internally on a std::vector of cublasLtMatmulHeuristicResult_t.)
  cublasLtMatmulAlgo_t fastest(const std::string& what) const {
    int found = 0;
    cublasLtMatmulHeuristicResult_t candidates[kCandidates] = {};
    KS_CUBLAS(product_.heuristic(handle_.get(), kCandidates, candidates, &found));
    Event start, stop;
    const cublasLtMatmulAlgo_t* best = nullptr;
    float best_ms = 0;
    for (int i = 0; i < found; ++i) {
      if (candidates[i].state != CUBLAS_STATUS_SUCCESS) continue;
      const bool first = best == nullptr;
      const float ms = time(candidates[i].algo, start, stop);
      if (first || ms < best_ms) best = &candidates[i].algo, best_ms = ms;
      if (first && ms > kBudgetMs) break;
    }
    if (!best) throw std::runtime_error(what + ": cublasLtMatmulAlgoGetHeuristic found no algorithm");
    return *best;
  }

  // The best of 5 calls with `algo` after 2, in milliseconds.
  float time(const cublasLtMatmulAlgo_t& algo, const Event& start, const Event& stop) const {
    constexpr int kWarmups = 2, kRepeats = 5;
    for (int i = 0; i < kWarmups; ++i) run_with(algo);
    float best = 0;
    for (int i = 0; i < kRepeats; ++i) {
      KS_CUDA(cudaEventRecord(start, operands_.stream));
      run_with(algo);
      KS_CUDA(cudaEventRecord(stop, operands_.stream));
      KS_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      KS_CUDA(cudaEventElapsedTime(&ms, start, stop));
      best = i == 0 ? ms : std::min(best, ms);
    }
    return best;
  }

  void run_with(const cublasLtMatmulAlgo_t& algo) const {
    const double alpha64 = 1.0, beta64 = 0.0;
    const float alpha32 = 1.0f, beta32 = 0.0f;
    const bool doubles = product_.scale() == CUDA_R_64F;
    product_.run(handle_.get(), algo, doubles ? static_cast<const void*>(&alpha64) : &alpha32, operands_.a, operands_.b,
                 doubles ? static_cast<const void*>(&beta64) : &beta32, operands_.d, operands_.workspace,
                 operands_.stream);
  }

  LtHandle handle_;
  LtProduct product_;
  Operands operands_;
  cublasLtMatmulAlgo_t algorithm_{};
};

}  // namespace ks
