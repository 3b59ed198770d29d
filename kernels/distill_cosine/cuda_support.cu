// The pieces both CUDA implementations of distill_cosine_loss share (cuda_support.h says what each is).
#include "kernels/distill_cosine/cuda_support.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ks::distill::cuda {

// ---- cuBLASLt ------------------------------------------------------------------------------------

Matmul::Matmul(cublasLtHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, const LtMatrix& a,
               const LtMatrix& b, const LtMatrix& d, bool bias, std::uint32_t alignment)
    : handle_(handle), bias_(bias), product_(CUBLAS_COMPUTE_32F, CUDA_R_32F, op_a, op_b, a, b, d) {
  if (bias) {
    product_.set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    product_.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, a.type);
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = product_.heuristic(handle_, 1, &result, &found, alignment);
  const bool transpose_a = op_a == CUBLAS_OP_T;
  if (status != CUBLAS_STATUS_SUCCESS || found == 0)
    throw std::runtime_error(concat("distill_cosine_loss: cuBLASLt has no algorithm for m=", d.rows, " n=", d.cols,
                                    " k=", transpose_a ? a.rows : a.cols, " (op A ", transpose_a ? 'T' : 'N', ", op B ",
                                    op_b == CUBLAS_OP_T ? 'T' : 'N', ", alignment ", alignment,
                                    "): ", cublasLtGetStatusName(status)));
  algo_ = result.algo;
}

void Matmul::run(const void* a, const void* b, void* d, float beta, const void* bias, void* workspace,
                 cudaStream_t stream) const {
  if (bias_) product_.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  const float alpha = 1.0f;
  product_.run(handle_, algo_, &alpha, a, b, &beta, d, workspace, stream);
}

Matmul logits_product(cublasLtHandle_t lt, const Problem& p, std::int64_t rows, std::int64_t hidden,
                      cudaDataType_t logits_type, bool bias, std::uint32_t alignment) {
  const cudaDataType_t type = data_type(p);
  return Matmul(lt, CUBLAS_OP_T, CUBLAS_OP_N, {type, hidden, p.vocab, hidden}, {type, hidden, rows, hidden},
                {logits_type, p.vocab, rows, p.vocab}, bias, alignment);
}

Matmul input_gradient_product(cublasLtHandle_t lt, const Problem& p, std::int64_t rows, std::uint32_t alignment) {
  const cudaDataType_t type = data_type(p);
  const std::int64_t hs = p.student_hidden();
  return Matmul(lt, CUBLAS_OP_N, CUBLAS_OP_N, {type, hs, p.vocab, hs}, {type, p.vocab, rows, p.vocab},
                {type, hs, rows, hs}, false, alignment);
}

Matmul weight_gradient_product(cublasLtHandle_t lt, const Problem& p, std::int64_t rows, std::uint32_t alignment) {
  const cudaDataType_t type = data_type(p);
  const std::int64_t hs = p.student_hidden();
  return Matmul(lt, CUBLAS_OP_N, CUBLAS_OP_T, {type, hs, rows, hs}, {type, p.vocab, rows, p.vocab},
                {type, hs, p.vocab, hs}, false, alignment);
}

PassProducts unchunked_products(cublasLtHandle_t lt, const Problem& p, cudaDataType_t logits_type) {
  return {logits_product(lt, p, p.tokens, p.student_hidden(), logits_type, false, 256),
          logits_product(lt, p, p.tokens, p.hidden, logits_type, false, 256),
          input_gradient_product(lt, p, p.tokens, 256), weight_gradient_product(lt, p, p.tokens, 256)};
}

// ---- device input generation ---------------------------------------------------------------------

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) { return grid_for(n, kThreads); }

// reference.cpp: inputs are counter_uniform(); weights and biases (2u − 1)·bound in float, bound =
// 1/sqrt(float(fan_in)); then rounded to dtype. The intrinsics keep nvcc from contracting the
// expression into an FMA, which would round differently from the host.
template <typename T> __global__ void fill_tensor(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t tensor,
                                                  float bound, bool linear) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float u = counter_uniform(seed, tensor, static_cast<std::uint64_t>(i));
    out[i] = from_float<T>(linear ? __fmul_rn(__fadd_rn(__fmul_rn(2.0f, u), -1.0f), bound) : u);
  }
}

__global__ void fill_targets(std::int64_t* targets, std::int64_t n, std::uint64_t seed, std::int64_t vocab,
                             double ignored_fraction, std::int64_t ignore_index) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const double u = counter_uniform(seed, kTargets, static_cast<std::uint64_t>(i));
    const auto target = min(static_cast<std::int64_t>(floor(u * static_cast<double>(vocab))), vocab - 1);
    const bool ignored = counter_uniform(seed, kIgnored, static_cast<std::uint64_t>(i)) < ignored_fraction;
    targets[i] = ignored ? ignore_index : target;
  }
}

__global__ void count_labelled(const std::int64_t* targets, std::int64_t n, std::int64_t ignore_index,
                               unsigned long long* count) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride())
    if (targets[i] != ignore_index) atomicAdd(count, 1ull);
}

void* generate(const Problem& p, DeviceMemory& memory, cudaStream_t stream, Tensor tensor, std::int64_t n,
               std::int64_t fan_in, const char* what) {
  const bool linear = fan_in > 0;
  const float bound = linear ? 1.0f / std::sqrt(static_cast<float>(fan_in)) : 0.0f;
  void* out = memory.allocate_bytes(static_cast<std::size_t>(n) * p.element_size(), what);
  if (p.bf16)
    fill_tensor<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(out), n, p.seed, tensor, bound,
                                                        linear);
  else fill_tensor<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(out), n, p.seed, tensor, bound, linear);
  KS_CUDA_LAUNCHED();
  return out;
}

template <typename T> __global__ void scale_kernel(T* values, std::int64_t n, const float* factor) {
  const float f = *factor;
  if (f == 1.0f) return;
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) values[i] = from_float<T>(to_float(values[i]) * f);
}

template <typename T> __global__ void poison_kernel(T* values, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) values[i] = from_float<T>(__int_as_float(0x7fc00000));
}

template <typename T>
__global__ void column_sums_kernel(const T* matrix, std::int64_t rows, std::int64_t cols, float* out) {
  for (std::int64_t j = grid_index(); j < cols; j += grid_stride()) {
    float sum = 0;
    for (std::int64_t r = 0; r < rows; ++r) sum += to_float(matrix[r * cols + j]);
    out[j] += sum;
  }
}

// Scales n values by *factor unless it is 1 (Liger's backward). `values` has dtype `type`.
void scale_unless_one(void* values, cudaDataType_t type, std::int64_t n, const float* factor, cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(values), n, factor);
  else scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(values), n, factor);
  KS_CUDA_LAUNCHED();
}

// Fills n values of type `type` with NaN, so that an unwritten output fails every check.
void poison(void* values, cudaDataType_t type, std::int64_t n, cudaStream_t stream) {
  if (type == CUDA_R_16BF)
    poison_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(values), n);
  else poison_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(values), n);
  KS_CUDA_LAUNCHED();
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
  std::function<void()> run = call_of_mode(
      mode, [this](bool with_grad) { forward_pass(with_grad); }, [this] { backward(); });
  if (mode == "backward" && !forward_done_) {  // backward scales the gradients a forward pass stored
    forward_pass(true);
    stream_.synchronize();
  }
  return {std::move(run), [this, mode] { return check(mode); }};
}

void DistillInstance::forward_pass(bool with_grad) {
  forward(with_grad);
  forward_done_ = forward_done_ || with_grad;
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
  const auto doubles = [](const void* values, std::int64_t n, bool bf16) {
    const std::vector<float> floats = download_floats(values, static_cast<std::size_t>(n), bf16);
    return std::vector<double>(floats.begin(), floats.end());
  };
  Result r;
  KS_CUDA(cudaMemcpy(&r.loss, loss_, sizeof r.loss, cudaMemcpyDeviceToHost));
  r.grad_xs = doubles(grad_xs_, problem_.tokens * hs, problem_.bf16);
  r.grad_ws = doubles(grad_ws_, problem_.vocab * hs, problem_.bf16);
  if (grad_bs_) r.grad_bs = doubles(grad_bs_, problem_.vocab, false);
  return r;
}

Inputs DistillInstance::download_inputs() const {
  stream_.synchronize();
  const Problem& p = problem_;
  const std::int64_t hs = p.student_hidden();
  const auto floats = [&](const void* values, std::int64_t n) {
    return download_floats(values, static_cast<std::size_t>(n), p.bf16);
  };
  Inputs in;
  in.xs = floats(in_.xs, p.tokens * hs);
  in.ws = floats(in_.ws, p.vocab * hs);
  in.xt = floats(in_.xt, p.tokens * p.hidden);
  in.wt = floats(in_.wt, p.vocab * p.hidden);
  if (p.bias) {
    in.bs = floats(in_.bs, p.vocab);
    in.bt = floats(in_.bt, p.vocab);
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
  const bool with_grad = mode != "no-grad-forward";
  forward_pass(with_grad);
  if (with_grad && mode != "forward") backward();
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
