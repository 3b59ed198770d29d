// gemm's `cublaslt` implementation: one cuBLASLt matmul, fp32 compute (no TF32, as torch.matmul on
// fp32 by default), bf16 in and out for bf16 (as torch.matmul returns it), a 32 MiB workspace, on the
// instance's own non-blocking stream. The algorithm is the fastest of cuBLASLt's top heuristic
// candidates, timed at setup (not in the measurement): the first candidate alone was measured 7 to
// 15 % slower than torch.matmul at 4096³ and 8192³ bf16 on an H200 (bench/results/gemm_vs_torch_h200.txt).
// The `cublas` implementation is the same product through cublasGemmEx with cuBLAS's own default
// algorithm choice (CUBLAS_GEMM_DEFAULT), the call torch.matmul makes: the two side by side say
// whether a difference to torch is the library's choice of kernel.
// (Messages are built with std::string: fmt's compile-time format strings do not compile under nvcc.)
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/gemm/gemm.h"

namespace ks::gemm {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;
constexpr int kCandidates = 8;                // heuristic candidates timed at setup
constexpr float kSearchBudgetMs = 25.0f;      // beyond one call this long, keep the first candidate
constexpr int kSearchWarmups = 2, kSearchRepeats = 5;

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("gemm cublaslt: ") + call + " failed: " + cudaGetErrorString(status));
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("gemm cublaslt: ") + call + " failed: " + cublasLtGetStatusName(status) + " (" +
                             cublasLtGetStatusString(status) + ")");
}

#define KS_CUDA(call) check_cuda((call), #call)
#define KS_CUBLAS(call) check_cublas((call), #call)

__device__ inline void store(float* out, std::uint64_t i, float value) { out[i] = value; }
__device__ inline void store(__nv_bfloat16* out, std::uint64_t i, float value) { out[i] = __float2bfloat16_rn(value); }

// The same values as make_matrix() on the host: input_value() rounded to the element type.
template <typename T>
__global__ void fill(T* out, std::uint64_t count, std::uint64_t seed, std::uint64_t matrix) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    store(out, i, input_value(seed, matrix, i));
}

float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

enum class Library { cublaslt, cublas };

class CublasLtGemm final : public Instance {
 public:
  CublasLtGemm(const Params& p, Library library) : p_(p), library_(library), element_size_(p.is_bf16() ? 2 : 4) {
    try {
      setup();
    } catch (...) {
      release();
      throw;
    }
  }
  ~CublasLtGemm() override { release(); }
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  void run(const std::string& mode) override {
    require_forward(mode);
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, and a row-major matrix read column-major is its
    // transpose: so B's buffer goes in as the first operand, A's as the second, no transposes.
    if (library_ == Library::cublas) gemm_ex();
    else matmul_with(algorithm_.algo);
    ran_ = true;
  }

  double flops(const std::string& mode) const override {
    require_forward(mode);
    return gemm::flops(p_);
  }
  double bytes(const std::string& mode) const override {
    require_forward(mode);
    return gemm::bytes(p_);
  }
  std::size_t device_bytes() const override {
    return element_size_ * static_cast<std::size_t>(p_.m * p_.k + p_.k * p_.n + p_.m * p_.n) + kWorkspaceBytes;
  }
  void* stream() const override { return stream_; }

  CheckResult check(const std::string& mode) override {
    if (!ran_) run(mode);
    KS_CUDA(cudaStreamSynchronize(stream_));
    // Only the compared entries are copied back, so checking a large product needs no large host buffer.
    return check_entries(p_, [this](std::int64_t row, std::int64_t col) { return read_c(row, col); });
  }

 private:
  static void require_forward(const std::string& mode) {
    if (mode != "forward") throw std::invalid_argument("gemm: unknown mode: " + mode + " (gemm has only forward)");
  }

  void setup() {
    KS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    KS_CUDA(cudaMalloc(&a_, element_size_ * static_cast<std::size_t>(p_.m * p_.k)));
    KS_CUDA(cudaMalloc(&b_, element_size_ * static_cast<std::size_t>(p_.k * p_.n)));
    KS_CUDA(cudaMalloc(&c_, element_size_ * static_cast<std::size_t>(p_.m * p_.n)));
    KS_CUDA(cudaMalloc(&workspace_, kWorkspaceBytes));
    generate(a_, p_.m * p_.k, kA);
    generate(b_, p_.k * p_.n, kB);
    if (library_ == Library::cublas) setup_cublas();
    else setup_cublaslt();
    KS_CUDA(cudaStreamSynchronize(stream_));
  }

  void setup_cublas() {
    KS_CUBLAS(cublasCreate(&blas_));
    KS_CUBLAS(cublasSetStream(blas_, stream_));
    KS_CUBLAS(cublasSetWorkspace(blas_, workspace_, kWorkspaceBytes));
  }

  void setup_cublaslt() {
    const cudaDataType_t type = p_.is_bf16() ? CUDA_R_16BF : CUDA_R_32F;
    KS_CUBLAS(cublasLtCreate(&handle_));
    KS_CUBLAS(cublasLtMatmulDescCreate(&matmul_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Column-major views of the row-major buffers (see run()): B as N×K, A as K×M, C as N×M.
    KS_CUBLAS(cublasLtMatrixLayoutCreate(&b_layout_, type, p_.n, p_.k, p_.n));
    KS_CUBLAS(cublasLtMatrixLayoutCreate(&a_layout_, type, p_.k, p_.m, p_.k));
    KS_CUBLAS(cublasLtMatrixLayoutCreate(&c_layout_, type, p_.n, p_.m, p_.n));
    KS_CUBLAS(cublasLtMatmulPreferenceCreate(&preference_));
    const std::uint64_t workspace = kWorkspaceBytes;
    KS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                   sizeof workspace));
    int found = 0;
    cublasLtMatmulHeuristicResult_t candidates[kCandidates] = {};
    KS_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, matmul_, b_layout_, a_layout_, c_layout_, c_layout_, preference_,
                                             kCandidates, candidates, &found));
    if (found == 0)
      throw std::runtime_error("gemm cublaslt: cublasLtMatmulAlgoGetHeuristic found no algorithm for " +
                               std::to_string(p_.m) + "x" + std::to_string(p_.n) + "x" + std::to_string(p_.k) + " " +
                               p_.dtype);
    algorithm_ = fastest(candidates, found);
  }

  void gemm_ex() {
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t type = p_.is_bf16() ? CUDA_R_16BF : CUDA_R_32F;
    const int m = static_cast<int>(p_.m), n = static_cast<int>(p_.n), k = static_cast<int>(p_.k);
    KS_CUBLAS(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b_, type, n, a_, type, k, &beta, c_, type,
                           n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  void matmul_with(const cublasLtMatmulAlgo_t& algo) {
    const float alpha = 1.0f, beta = 0.0f;
    KS_CUBLAS(cublasLtMatmul(handle_, matmul_, &alpha, b_, b_layout_, a_, a_layout_, &beta, c_, c_layout_, c_,
                             c_layout_, &algo, workspace_, kWorkspaceBytes, stream_));
  }

  // Milliseconds of the best of kSearchRepeats calls with `algo`, after kSearchWarmups.
  float time_candidate(const cublasLtMatmulAlgo_t& algo, cudaEvent_t start, cudaEvent_t stop) {
    for (int i = 0; i < kSearchWarmups; ++i) matmul_with(algo);
    float best = 0;
    for (int i = 0; i < kSearchRepeats; ++i) {
      KS_CUDA(cudaEventRecord(start, stream_));
      matmul_with(algo);
      KS_CUDA(cudaEventRecord(stop, stream_));
      KS_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      KS_CUDA(cudaEventElapsedTime(&ms, start, stop));
      best = i == 0 ? ms : std::min(best, ms);
    }
    return best;
  }

  cublasLtMatmulHeuristicResult_t fastest(const cublasLtMatmulHeuristicResult_t* candidates, int count) {
    cudaEvent_t start = nullptr, stop = nullptr;
    KS_CUDA(cudaEventCreate(&start));
    KS_CUDA(cudaEventCreate(&stop));
    int best = 0;
    float best_ms = 0;
    try {
      for (int i = 0; i < count; ++i) {
        if (candidates[i].state != CUBLAS_STATUS_SUCCESS) continue;
        const float ms = time_candidate(candidates[i].algo, start, stop);
        if (i == 0 || ms < best_ms) best = i, best_ms = ms;
        if (i == 0 && ms > kSearchBudgetMs) break;  // large products: the search would cost seconds
      }
    } catch (...) {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      throw;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return candidates[best];
  }

  void generate(void* buffer, std::int64_t count, Matrix matrix) {
    constexpr int kThreads = 256, kMaxBlocks = 4096;
    const auto blocks = static_cast<int>(std::min<std::int64_t>((count + kThreads - 1) / kThreads, kMaxBlocks));
    const auto n = static_cast<std::uint64_t>(count);
    if (p_.is_bf16())
      fill<<<blocks, kThreads, 0, stream_>>>(static_cast<__nv_bfloat16*>(buffer), n, p_.seed, matrix);
    else
      fill<<<blocks, kThreads, 0, stream_>>>(static_cast<float*>(buffer), n, p_.seed, matrix);
    KS_CUDA(cudaGetLastError());
  }

  double read_c(std::int64_t row, std::int64_t col) const {
    const std::size_t offset = element_size_ * static_cast<std::size_t>(row * p_.n + col);
    const char* source = static_cast<const char*>(c_) + offset;
    if (p_.is_bf16()) {
      std::uint16_t bits = 0;
      KS_CUDA(cudaMemcpy(&bits, source, sizeof bits, cudaMemcpyDeviceToHost));
      return bf16_bits_to_float(bits);
    }
    float value = 0;
    KS_CUDA(cudaMemcpy(&value, source, sizeof value, cudaMemcpyDeviceToHost));
    return value;
  }

  // Frees whatever was made; called from the destructor and from a constructor that failed halfway,
  // so it never throws and skips what is still null.
  void release() noexcept {
    if (stream_) cudaStreamSynchronize(stream_);
    if (preference_) cublasLtMatmulPreferenceDestroy(preference_);
    if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
    if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
    if (c_layout_) cublasLtMatrixLayoutDestroy(c_layout_);
    if (matmul_) cublasLtMatmulDescDestroy(matmul_);
    if (handle_) cublasLtDestroy(handle_);
    if (blas_) cublasDestroy(blas_);
    blas_ = nullptr;
    for (void* buffer : {a_, b_, c_, workspace_})
      if (buffer) cudaFree(buffer);
    if (stream_) cudaStreamDestroy(stream_);
    preference_ = nullptr;
    a_layout_ = b_layout_ = c_layout_ = nullptr;
    matmul_ = nullptr;
    handle_ = nullptr;
    a_ = b_ = c_ = workspace_ = nullptr;
    stream_ = nullptr;
  }

  Params p_;
  Library library_;
  std::size_t element_size_;
  cublasHandle_t blas_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *workspace_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t matmul_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  cublasLtMatmulHeuristicResult_t algorithm_{};
  bool ran_ = false;
};

}  // namespace

std::unique_ptr<Instance> make_cublaslt_instance(const Params& p) {
  return std::make_unique<CublasLtGemm>(p, Library::cublaslt);
}
std::unique_ptr<Instance> make_cublas_instance(const Params& p) {
  return std::make_unique<CublasLtGemm>(p, Library::cublas);
}

}  // namespace ks::gemm
