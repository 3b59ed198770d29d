// The pieces both CUDA implementations of distill_cosine share (cuda_support.h says what each is).
#include "kernels/distill_cosine/cuda_support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ks::distill::cuda {

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw std::runtime_error(concat("distill_cosine: ", call, " failed at ", file, ":", line, ": ",
                                    cudaGetErrorString(status), " (", cudaGetErrorName(status), ")"));
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(concat("distill_cosine: ", call, " failed at ", file, ":", line, ": cuBLAS status ",
                                    static_cast<int>(status)));
}

DeviceMemory::~DeviceMemory() {
  for (void* block : blocks_) cudaFree(block);
}

void* DeviceMemory::allocate_bytes(std::size_t bytes, const char* what) {
  void* block = nullptr;
  const cudaError_t status = cudaMalloc(&block, std::max<std::size_t>(bytes, 1));
  if (status != cudaSuccess)
    throw std::runtime_error(concat("distill_cosine: cudaMalloc of ", bytes, " bytes for ", what, " failed (",
                                    total_, " bytes held): ", cudaGetErrorString(status)));
  blocks_.push_back(block);
  total_ += bytes;
  return block;
}

std::uint32_t alignment_of(std::int64_t bytes) {
  std::uint32_t alignment = 256;
  while (alignment > 1 && bytes % alignment != 0) alignment /= 2;
  return alignment;
}

cudaDataType_t data_type(const Params& p) { return p.dtype == "bf16" ? CUDA_R_16BF : CUDA_R_32F; }
std::size_t element_size(const Params& p) { return p.dtype == "bf16" ? 2 : 4; }

// ---- cuBLASLt ------------------------------------------------------------------------------------

Matmul::Matmul(cublasLtHandle_t handle, const MatmulShape& shape) : handle_(handle), shape_(shape) {
  KS_CUBLAS(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = shape.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = shape.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (shape.bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    const cudaDataType_t bias_type = shape.ab_type;
    KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
  }
  // Stored shapes of A and B (before op), column-major.
  const std::int64_t a_rows = shape.transpose_a ? shape.k : shape.m, a_cols = shape.transpose_a ? shape.m : shape.k;
  const std::int64_t b_rows = shape.transpose_b ? shape.n : shape.k, b_cols = shape.transpose_b ? shape.k : shape.n;
  KS_CUBLAS(cublasLtMatrixLayoutCreate(&a_, shape.ab_type, a_rows, a_cols, shape.lda));
  KS_CUBLAS(cublasLtMatrixLayoutCreate(&b_, shape.ab_type, b_rows, b_cols, shape.ldb));
  KS_CUBLAS(cublasLtMatrixLayoutCreate(&d_, shape.d_type, shape.m, shape.n, shape.ldd));

  cublasLtMatmulPreference_t preference = nullptr;
  KS_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
  const std::uint64_t workspace = kWorkspaceBytes;
  KS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                 sizeof workspace));
  for (auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                         CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    KS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &shape.alignment, sizeof shape.alignment));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0)
    throw std::runtime_error(concat("distill_cosine: cuBLASLt has no algorithm for m=", shape.m, " n=", shape.n,
                                    " k=", shape.k, " (op A ", shape.transpose_a ? 'T' : 'N', ", op B ",
                                    shape.transpose_b ? 'T' : 'N', ", alignment ", shape.alignment, "), status ",
                                    static_cast<int>(status)));
  algo_ = result.algo;
}

Matmul::~Matmul() {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void Matmul::run(const void* a, const void* b, void* d, float beta, const void* bias, void* workspace,
                 cudaStream_t stream) const {
  if (shape_.bias)
    KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const float alpha = 1.0f;
  KS_CUBLAS(cublasLtMatmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &algo_, workspace,
                           kWorkspaceBytes, stream));
}

// ---- device input generation ---------------------------------------------------------------------

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 132 * 32));
}

__device__ inline void store(float* out, std::int64_t i, float v) { out[i] = v; }
__device__ inline void store(__nv_bfloat16* out, std::int64_t i, float v) { out[i] = __float2bfloat16_rn(v); }
__device__ inline float load(const float* in, std::int64_t i) { return in[i]; }
__device__ inline float load(const __nv_bfloat16* in, std::int64_t i) { return __bfloat162float(in[i]); }

// reference.cpp: inputs are counter_uniform(); weights and biases (2u − 1)·bound in float, bound =
// 1/sqrt(float(fan_in)); then rounded to dtype. The intrinsics keep nvcc from contracting the
// expression into an FMA, which would round differently from the host.
template <typename T>
__global__ void fill_tensor(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t tensor, float bound,
                            bool linear) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float u = counter_uniform(seed, tensor, static_cast<std::uint64_t>(i));
    store(out, i, linear ? __fmul_rn(__fadd_rn(__fmul_rn(2.0f, u), -1.0f), bound) : u);
  }
}

__global__ void fill_targets(std::int64_t* targets, std::int64_t n, std::uint64_t seed, std::int64_t vocab,
                             double ignored_fraction, std::int64_t ignore_index) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double u = counter_uniform(seed, kTargets, static_cast<std::uint64_t>(i));
    const auto target = min(static_cast<std::int64_t>(floor(u * static_cast<double>(vocab))), vocab - 1);
    const bool ignored = counter_uniform(seed, kIgnored, static_cast<std::uint64_t>(i)) < ignored_fraction;
    targets[i] = ignored ? ignore_index : target;
  }
}

__global__ void count_labelled(const std::int64_t* targets, std::int64_t n, std::int64_t ignore_index,
                               unsigned long long* count) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    if (targets[i] != ignore_index) atomicAdd(count, 1ull);
}

void* generate(const Params& p, DeviceMemory& memory, cudaStream_t stream, Tensor tensor, std::int64_t n,
               std::int64_t fan_in, const char* what) {
  const bool linear = fan_in > 0;
  const float bound = linear ? 1.0f / std::sqrt(static_cast<float>(fan_in)) : 0.0f;
  if (p.dtype == "bf16") {
    auto* out = memory.allocate<__nv_bfloat16>(static_cast<std::size_t>(n), what);
    fill_tensor<<<blocks_for(n), kThreads, 0, stream>>>(out, n, p.seed, tensor, bound, linear);
    KS_CUDA_LAUNCHED();
    return out;
  }
  auto* out = memory.allocate<float>(static_cast<std::size_t>(n), what);
  fill_tensor<<<blocks_for(n), kThreads, 0, stream>>>(out, n, p.seed, tensor, bound, linear);
  KS_CUDA_LAUNCHED();
  return out;
}

template <typename T>
__global__ void scale_kernel(T* values, std::int64_t n, const float* factor) {
  const float f = *factor;
  if (f == 1.0f) return;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    store(values, i, load(values, i) * f);
}

template <typename T>
__global__ void poison_kernel(T* values, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    store(values, i, __int_as_float(0x7fc00000));
}

template <typename T>
__global__ void column_sums_kernel(const T* matrix, std::int64_t rows, std::int64_t cols, float* out) {
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < cols;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (std::int64_t r = 0; r < rows; ++r) sum += load(matrix, r * cols + j);
    out[j] += sum;
  }
}

}  // namespace

DeviceInputs generate_inputs(const Params& p, DeviceMemory& memory, cudaStream_t stream) {
  const std::int64_t hs = p.student_hidden();
  DeviceInputs in;
  in.xs = generate(p, memory, stream, kStudentInput, p.tokens * hs, 0, "student input");
  in.ws = generate(p, memory, stream, kStudentWeight, p.vocab * hs, hs, "student weight");
  in.xt = generate(p, memory, stream, kTeacherInput, p.tokens * p.hidden, 0, "teacher input");
  in.wt = generate(p, memory, stream, kTeacherWeight, p.vocab * p.hidden, p.hidden, "teacher weight");
  if (p.bias) {
    in.bs = generate(p, memory, stream, kStudentBias, p.vocab, hs, "student bias");
    in.bt = generate(p, memory, stream, kTeacherBias, p.vocab, p.hidden, "teacher bias");
  }
  in.targets = memory.allocate<std::int64_t>(static_cast<std::size_t>(p.tokens), "targets");
  fill_targets<<<blocks_for(p.tokens), kThreads, 0, stream>>>(in.targets, p.tokens, p.seed, p.vocab,
                                                              p.ignored_fraction, p.ignore_index);
  KS_CUDA_LAUNCHED();
  auto* count = memory.allocate<unsigned long long>(1, "labelled-token count");
  KS_CUDA(cudaMemsetAsync(count, 0, sizeof *count, stream));
  count_labelled<<<blocks_for(p.tokens), kThreads, 0, stream>>>(in.targets, p.tokens, p.ignore_index, count);
  KS_CUDA_LAUNCHED();
  unsigned long long labelled = 0;
  KS_CUDA(cudaMemcpyAsync(&labelled, count, sizeof labelled, cudaMemcpyDeviceToHost, stream));
  KS_CUDA(cudaStreamSynchronize(stream));
  in.labelled = static_cast<std::int64_t>(labelled);
  return in;
}

double loss_divisor(const Params& p, std::int64_t labelled) {
  if (p.normalize == "tokens") return static_cast<double>(p.tokens);
  return static_cast<double>(std::max<std::int64_t>(labelled, 1));
}

void scale_unless_one(void* values, cudaDataType_t type, std::int64_t n, const float* factor, cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(values), n, factor);
  else
    scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(values), n, factor);
  KS_CUDA_LAUNCHED();
}

void poison(void* values, cudaDataType_t type, std::int64_t n, cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    poison_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(values), n);
  else
    poison_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(values), n);
  KS_CUDA_LAUNCHED();
}

std::vector<float> download_floats(const void* values, cudaDataType_t type, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  if (type == CUDA_R_32F) {
    KS_CUDA(cudaMemcpy(out.data(), values, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }
  std::vector<std::uint16_t> raw(out.size());  // bf16 bits: the upper half of a float's
  KS_CUDA(cudaMemcpy(raw.data(), values, raw.size() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::uint32_t bits = static_cast<std::uint32_t>(raw[i]) << 16;
    std::memcpy(&out[i], &bits, sizeof bits);
  }
  return out;
}

std::vector<double> download(const void* values, cudaDataType_t type, std::int64_t n) {
  const std::vector<float> floats = download_floats(values, type, n);
  return std::vector<double>(floats.begin(), floats.end());
}

void add_column_sums(const void* matrix, cudaDataType_t type, std::int64_t rows, std::int64_t cols, float* out,
                     cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    column_sums_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(matrix), rows,
                                                                  cols, out);
  else
    column_sums_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(static_cast<const float*>(matrix), rows, cols, out);
  KS_CUDA_LAUNCHED();
}

// ---- the shared instance -------------------------------------------------------------------------

DistillInstance::DistillInstance(const Params& p) : params_(p) {
  KS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  KS_CUBLAS(cublasLtCreate(&lt_));
  in_ = generate_inputs(p, memory_, stream_);
  divisor_ = loss_divisor(p, in_.labelled);
  const std::int64_t hs = p.student_hidden();
  grad_xs_ = memory_.allocate<char>(static_cast<std::size_t>(p.tokens * hs) * element_size(p), "grad of Xs");
  grad_ws_ = memory_.allocate<char>(static_cast<std::size_t>(p.vocab * hs) * element_size(p), "grad of Ws");
  if (p.bias) grad_bs_ = memory_.allocate<float>(static_cast<std::size_t>(p.vocab), "grad of bs");
  loss_ = memory_.allocate<double>(1, "loss");
  grad_output_ = memory_.allocate<float>(1, "incoming gradient");
  const float one = 1.0f;
  KS_CUDA(cudaMemcpyAsync(grad_output_, &one, sizeof one, cudaMemcpyHostToDevice, stream_));
  workspace_ = memory_.allocate<char>(kWorkspaceBytes, "cuBLASLt workspace");
  KS_CUDA(cudaStreamSynchronize(stream_));
}

DistillInstance::~DistillInstance() {
  if (stream_) cudaStreamSynchronize(stream_);
  if (lt_) cublasLtDestroy(lt_);
  if (stream_) cudaStreamDestroy(stream_);
}

void DistillInstance::prepare(const std::string& mode) {
  if (mode == "backward" && !forward_done_) {
    forward(true);
    forward_done_ = true;
    KS_CUDA(cudaStreamSynchronize(stream_));
  }
}

void DistillInstance::backward() {
  const std::int64_t hs = params_.student_hidden();
  scale_unless_one(grad_xs_, data_type(params_), params_.tokens * hs, grad_output_, stream_);
  scale_unless_one(grad_ws_, data_type(params_), params_.vocab * hs, grad_output_, stream_);
  if (grad_bs_) scale_unless_one(grad_bs_, CUDA_R_32F, params_.vocab, grad_output_, stream_);
}

void DistillInstance::run(const std::string& mode) {
  if (mode == "forward" || mode == "full") {
    forward(true);
    forward_done_ = true;
    if (mode == "full") backward();
  } else if (mode == "no-grad-forward") {
    forward(false);
  } else if (mode == "backward") {
    if (!forward_done_)
      throw std::logic_error("distill_cosine: mode backward needs prepare(\"backward\") first (no stored gradients)");
    backward();
  } else {
    throw std::invalid_argument("distill_cosine: unknown mode: " + mode);
  }
}

void DistillInstance::poison_outputs() {
  const std::int64_t hs = params_.student_hidden();
  poison(grad_xs_, data_type(params_), params_.tokens * hs, stream_);
  poison(grad_ws_, data_type(params_), params_.vocab * hs, stream_);
  if (grad_bs_) poison(grad_bs_, CUDA_R_32F, params_.vocab, stream_);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  KS_CUDA(cudaMemcpyAsync(loss_, &nan, sizeof nan, cudaMemcpyHostToDevice, stream_));
}

Result DistillInstance::download_result() const {
  KS_CUDA(cudaStreamSynchronize(stream_));
  const std::int64_t hs = params_.student_hidden();
  Result r;
  KS_CUDA(cudaMemcpy(&r.loss, loss_, sizeof r.loss, cudaMemcpyDeviceToHost));
  r.grad_xs = download(grad_xs_, data_type(params_), params_.tokens * hs);
  r.grad_ws = download(grad_ws_, data_type(params_), params_.vocab * hs);
  if (grad_bs_) r.grad_bs = download(grad_bs_, CUDA_R_32F, params_.vocab);
  return r;
}

Inputs DistillInstance::download_inputs() const {
  KS_CUDA(cudaStreamSynchronize(stream_));
  const std::int64_t hs = params_.student_hidden();
  const cudaDataType_t type = data_type(params_);
  Inputs in;
  in.xs = download_floats(in_.xs, type, params_.tokens * hs);
  in.ws = download_floats(in_.ws, type, params_.vocab * hs);
  in.xt = download_floats(in_.xt, type, params_.tokens * params_.hidden);
  in.wt = download_floats(in_.wt, type, params_.vocab * params_.hidden);
  if (params_.bias) {
    in.bs = download_floats(in_.bs, type, params_.vocab);
    in.bt = download_floats(in_.bt, type, params_.vocab);
  }
  in.targets.resize(static_cast<std::size_t>(params_.tokens));
  KS_CUDA(cudaMemcpy(in.targets.data(), in_.targets, in.targets.size() * sizeof(std::int64_t),
                     cudaMemcpyDeviceToHost));
  return in;
}

namespace {

// Shapes whose double-precision reference takes at most a few seconds on one CPU core.
bool cpu_reference_affordable(const Params& p) {
  const double work = static_cast<double>(p.tokens) * static_cast<double>(p.vocab) * static_cast<double>(p.hidden);
  return work <= 2e9;
}

void compare(const char* what, double error, double tolerance, bool& passed, std::string& detail) {
  const bool ok = error <= tolerance;  // NaN fails
  passed = passed && ok;
  detail += concat(detail.empty() ? "" : "; ", what, " rel.err ", error, " (<= ", tolerance, ")", ok ? "" : " FAILED");
}

}  // namespace

CheckResult DistillInstance::check(const std::string& mode) {
  // Poison first so that an output the pass does not write fails the comparison.
  poison_outputs();
  if (mode == "backward") {
    forward(true);
    backward();
  } else {
    run(mode);
  }
  const Result got = download_result();

  Result want;
  std::string against;
  if (cpu_reference_affordable(params_)) {
    want = reference(params_, make_inputs(params_));
    against = "the CPU reference";
  } else {
    std::unique_ptr<Instance> other = make_counterpart();
    auto& counterpart = dynamic_cast<DistillInstance&>(*other);
    counterpart.run(mode == "no-grad-forward" ? "no-grad-forward" : "forward");
    want = counterpart.download_result();
    against = std::string("the ") + counterpart.name() + " implementation on the GPU";
  }

  CheckResult result{true, concat(name(), " vs ", against, " (", mode, "): ")};
  std::string detail;
  compare("loss", std::abs(got.loss - want.loss) / std::max(std::abs(want.loss), 1e-30), 2e-3, result.passed, detail);
  if (mode != "no-grad-forward") {
    compare("grad Xs", relative_error(got.grad_xs, want.grad_xs), 2e-2, result.passed, detail);
    compare("grad Ws", relative_error(got.grad_ws, want.grad_ws), 2e-2, result.passed, detail);
    if (params_.bias) compare("grad bs", relative_error(got.grad_bs, want.grad_bs), 2e-2, result.passed, detail);
  }
  result.detail += detail + concat(" (loss ", got.loss, " vs ", want.loss, ")");
  return result;
}

}  // namespace ks::distill::cuda

namespace ks::distill {

Inputs download_inputs(Instance& instance) {
  return dynamic_cast<const cuda::DistillInstance&>(instance).download_inputs();
}

}  // namespace ks::distill
