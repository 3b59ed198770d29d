// The pieces both CUDA implementations of distill_cosine_loss share (cuda_support.h says what each is).
#include "kernels/distill_cosine/cuda_support.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "kernels/common/bf16.h"

namespace ks::distill::cuda {

std::uint32_t alignment_of(std::int64_t bytes) {
  std::uint32_t alignment = 256;
  while (alignment > 1 && bytes % alignment != 0) alignment /= 2;
  return alignment;
}

// ---- cuBLASLt ------------------------------------------------------------------------------------

namespace {

Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> layout(cudaDataType_t type, std::int64_t rows,
                                                                  std::int64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t raw = nullptr;
  KS_CUBLAS(cublasLtMatrixLayoutCreate(&raw, type, rows, cols, ld));
  return Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>(raw);
}

}  // namespace

Matmul::Matmul(cublasLtHandle_t handle, const MatmulShape& shape) : handle_(handle), shape_(shape) {
  cublasLtMatmulDesc_t desc = nullptr;
  KS_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  desc_.reset(desc);
  const cublasOperation_t ta = shape.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = shape.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (shape.bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    const cudaDataType_t bias_type = shape.ab_type;
    KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
  }
  // Stored shapes of A and B (before op), column-major.
  const std::int64_t a_rows = shape.transpose_a ? shape.k : shape.m, a_cols = shape.transpose_a ? shape.m : shape.k;
  const std::int64_t b_rows = shape.transpose_b ? shape.n : shape.k, b_cols = shape.transpose_b ? shape.k : shape.n;
  a_ = layout(shape.ab_type, a_rows, a_cols, shape.lda);
  b_ = layout(shape.ab_type, b_rows, b_cols, shape.ldb);
  d_ = layout(shape.d_type, shape.m, shape.n, shape.ldd);

  const MatmulPreference preference = workspace_preference();
  cublasLtMatmulPreference_t raw = preference.get();
  for (auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                         CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    KS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(raw, attribute, &shape.alignment, sizeof shape.alignment));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, desc, a_.get(), b_.get(), d_.get(), d_.get(), raw, 1, &result, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0)
    throw std::runtime_error(concat("distill_cosine_loss: cuBLASLt has no algorithm for m=", shape.m, " n=", shape.n,
                                    " k=", shape.k, " (op A ", shape.transpose_a ? 'T' : 'N', ", op B ",
                                    shape.transpose_b ? 'T' : 'N', ", alignment ", shape.alignment,
                                    "): ", cublasLtGetStatusName(status)));
  algo_ = result.algo;
}

void Matmul::run(const void* a, const void* b, void* d, float beta, const void* bias, void* workspace,
                 cudaStream_t stream) const {
  if (shape_.bias)
    KS_CUBLAS(cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const float alpha = 1.0f;
  KS_CUBLAS(cublasLtMatmul(handle_, desc_.get(), &alpha, a, a_.get(), b, b_.get(), &beta, d, d_.get(), d, d_.get(),
                           &algo_, workspace, kCublasWorkspaceBytes, stream));
}

// ---- device input generation ---------------------------------------------------------------------

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) { return grid_for(n, kThreads); }

__device__ inline void store(float* out, std::int64_t i, float v) { out[i] = v; }
__device__ inline void store(__nv_bfloat16* out, std::int64_t i, float v) { out[i] = __float2bfloat16_rn(v); }
__device__ inline float load(const float* in, std::int64_t i) { return in[i]; }
__device__ inline float load(const __nv_bfloat16* in, std::int64_t i) { return __bfloat162float(in[i]); }

// reference.cpp: inputs are counter_uniform(); weights and biases (2u − 1)·bound in float, bound =
// 1/sqrt(float(fan_in)); then rounded to dtype. The intrinsics keep nvcc from contracting the
// expression into an FMA, which would round differently from the host.
template <typename T> __global__ void fill_tensor(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t tensor,
                                                  float bound, bool linear) {
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

void* generate(const Problem& p, DeviceMemory& memory, cudaStream_t stream, Tensor tensor, std::int64_t n,
               std::int64_t fan_in, const char* what) {
  const bool linear = fan_in > 0;
  const float bound = linear ? 1.0f / std::sqrt(static_cast<float>(fan_in)) : 0.0f;
  if (p.bf16) {
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

template <typename T> __global__ void scale_kernel(T* values, std::int64_t n, const float* factor) {
  const float f = *factor;
  if (f == 1.0f) return;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    store(values, i, load(values, i) * f);
}

template <typename T> __global__ void poison_kernel(T* values, std::int64_t n) {
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

DeviceInputs generate_inputs(const Problem& p, DeviceMemory& memory, cudaStream_t stream) {
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
  fill_targets<<<blocks_for(p.tokens), kThreads, 0, stream>>>(in.targets, p.tokens, p.seed, p.vocab, p.ignored_fraction,
                                                              p.ignore_index);
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

void scale_unless_one(void* values, cudaDataType_t type, std::int64_t n, const float* factor, cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(values), n, factor);
  else scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(values), n, factor);
  KS_CUDA_LAUNCHED();
}

void poison(void* values, cudaDataType_t type, std::int64_t n, cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    poison_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(values), n);
  else poison_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(values), n);
  KS_CUDA_LAUNCHED();
}

std::vector<float> download_floats(const void* values, cudaDataType_t type, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  if (type == CUDA_R_32F) {
    KS_CUDA(cudaMemcpy(out.data(), values, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }
  std::vector<std::uint16_t> raw(out.size());
  KS_CUDA(cudaMemcpy(raw.data(), values, raw.size() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = bf16_bits_to_float(raw[i]);
  return out;
}

std::vector<double> download(const void* values, cudaDataType_t type, std::int64_t n) {
  const std::vector<float> floats = download_floats(values, type, n);
  return std::vector<double>(floats.begin(), floats.end());
}

void add_column_sums(const void* matrix, cudaDataType_t type, std::int64_t rows, std::int64_t cols, float* out,
                     cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    column_sums_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(matrix), rows, cols,
                                                                  out);
  else
    column_sums_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(static_cast<const float*>(matrix), rows, cols, out);
  KS_CUDA_LAUNCHED();
}

// ---- the shared instance -------------------------------------------------------------------------

DistillInstance::DistillInstance(const Problem& p) : problem_(p) {
  cublasLtHandle_t lt = nullptr;
  KS_CUBLAS(cublasLtCreate(&lt));
  lt_.reset(lt);
  in_ = generate_inputs(p, memory_, stream_);
  divisor_ = loss_divisor(p, in_.labelled);
  const std::int64_t hs = p.student_hidden();
  grad_xs_ = memory_.allocate<char>(static_cast<std::size_t>(p.tokens * hs) * p.element_size(), "grad of Xs");
  grad_ws_ = memory_.allocate<char>(static_cast<std::size_t>(p.vocab * hs) * p.element_size(), "grad of Ws");
  if (p.bias) grad_bs_ = memory_.allocate<float>(static_cast<std::size_t>(p.vocab), "grad of bs");
  loss_ = memory_.allocate<double>(1, "loss");
  grad_output_ = memory_.allocate<float>(1, "incoming gradient");
  const float one = 1.0f;
  KS_CUDA(cudaMemcpyAsync(grad_output_, &one, sizeof one, cudaMemcpyHostToDevice, stream_));
  workspace_ = memory_.allocate<char>(kCublasWorkspaceBytes, "cuBLASLt workspace");
  stream_.synchronize();
}

BoundMode DistillInstance::bind(const std::string& mode) {
  std::function<void()> run;
  if (mode == "forward") {
    run = [this] { forward_with_gradients(); };
  } else if (mode == "full") {
    run = [this] {
      forward_with_gradients();
      backward();
    };
  } else if (mode == "no-grad-forward") {
    run = [this] { forward(false); };
  } else if (mode == "backward") {
    // backward scales the gradients a forward pass stored.
    if (!forward_done_) {
      forward_with_gradients();
      stream_.synchronize();
    }
    run = [this] { backward(); };
  } else {
    throw std::invalid_argument("distill_cosine_loss: unknown mode " + mode);
  }
  return {std::move(run), [this, mode] { return check(mode); }};
}

void DistillInstance::forward_with_gradients() {
  forward(true);
  forward_done_ = true;
}

void DistillInstance::backward() {
  const std::int64_t hs = problem_.student_hidden();
  scale_unless_one(grad_xs_, data_type(problem_), problem_.tokens * hs, grad_output_, stream_);
  scale_unless_one(grad_ws_, data_type(problem_), problem_.vocab * hs, grad_output_, stream_);
  if (grad_bs_) scale_unless_one(grad_bs_, CUDA_R_32F, problem_.vocab, grad_output_, stream_);
}

void DistillInstance::poison_outputs() {
  const std::int64_t hs = problem_.student_hidden();
  poison(grad_xs_, data_type(problem_), problem_.tokens * hs, stream_);
  poison(grad_ws_, data_type(problem_), problem_.vocab * hs, stream_);
  if (grad_bs_) poison(grad_bs_, CUDA_R_32F, problem_.vocab, stream_);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  KS_CUDA(cudaMemcpyAsync(loss_, &nan, sizeof nan, cudaMemcpyHostToDevice, stream_));
}

Result DistillInstance::download_result() const {
  stream_.synchronize();
  const std::int64_t hs = problem_.student_hidden();
  Result r;
  KS_CUDA(cudaMemcpy(&r.loss, loss_, sizeof r.loss, cudaMemcpyDeviceToHost));
  r.grad_xs = download(grad_xs_, data_type(problem_), problem_.tokens * hs);
  r.grad_ws = download(grad_ws_, data_type(problem_), problem_.vocab * hs);
  if (grad_bs_) r.grad_bs = download(grad_bs_, CUDA_R_32F, problem_.vocab);
  return r;
}

Inputs DistillInstance::download_inputs() const {
  stream_.synchronize();
  const Problem& p = problem_;
  const std::int64_t hs = p.student_hidden();
  const cudaDataType_t type = data_type(p);
  Inputs in;
  in.xs = download_floats(in_.xs, type, p.tokens * hs);
  in.ws = download_floats(in_.ws, type, p.vocab * hs);
  in.xt = download_floats(in_.xt, type, p.tokens * p.hidden);
  in.wt = download_floats(in_.wt, type, p.vocab * p.hidden);
  if (p.bias) {
    in.bs = download_floats(in_.bs, type, p.vocab);
    in.bt = download_floats(in_.bt, type, p.vocab);
  }
  in.targets.resize(static_cast<std::size_t>(p.tokens));
  KS_CUDA(cudaMemcpy(in.targets.data(), in_.targets, in.targets.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  return in;
}

namespace {

// Shapes whose double-precision reference takes at most a few seconds on one CPU core.
bool cpu_reference_affordable(const Problem& p) {
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
  if (mode == "no-grad-forward") {
    forward(false);
  } else {
    forward_with_gradients();
    if (mode != "forward") backward();
  }
  const Result got = download_result();

  Result want;
  std::string against;
  if (cpu_reference_affordable(problem_)) {
    want = reference(problem_, make_inputs(problem_));
    against = "the CPU reference";
  } else {
    const std::unique_ptr<DistillInstance> counterpart = make_counterpart();
    counterpart->forward(mode != "no-grad-forward");
    want = counterpart->download_result();
    against = std::string("the ") + counterpart->name() + " implementation on the GPU";
  }

  CheckResult result{true, concat(name(), " vs ", against, " (", mode, "): ")};
  std::string detail;
  compare("loss", std::abs(got.loss - want.loss) / std::max(std::abs(want.loss), 1e-30), 2e-3, result.passed, detail);
  if (mode != "no-grad-forward") {
    compare("grad Xs", relative_error(got.grad_xs, want.grad_xs), 2e-2, result.passed, detail);
    compare("grad Ws", relative_error(got.grad_ws, want.grad_ws), 2e-2, result.passed, detail);
    if (problem_.bias) compare("grad bs", relative_error(got.grad_bs, want.grad_bs), 2e-2, result.passed, detail);
  }
  result.detail += detail + concat(" (loss ", got.loss, " vs ", want.loss, ")");
  return result;
}

}  // namespace ks::distill::cuda

namespace ks::distill {

std::unique_ptr<Instance> make_fused_instance(const Problem& p, const FusedOptions& options) {
  return cuda::make_fused(p, options);
}

std::unique_ptr<Instance> make_naive_instance(const Problem& p) { return cuda::make_naive(p); }

Inputs download_inputs(Instance& instance) {
  return dynamic_cast<const cuda::DistillInstance&>(instance).download_inputs();
}

}  // namespace ks::distill
