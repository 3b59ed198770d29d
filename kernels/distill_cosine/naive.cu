// distill_cosine_loss's `naive` implementation: the baseline, as PyTorch eager would run it.
// Unchunked: the full BT×V logits in fp32, and one simple kernel per operation (bias add,
// log_softmax, gather, divide by T, norms, normalise, cosine, sum; then autograd's chain back through
// each step), each a pass over memory. It follows autograd's order of operations rather than the
// fused closed form, so the two check each other at shapes too large for the CPU reference.
#include <memory>

#include "kernels/distill_cosine/cuda_support.h"

namespace ks::distill {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kNormalizeEps = 1e-12;  // F.normalize
constexpr double kCosineEps = 1e-8;      // F.cosine_similarity

unsigned blocks_for(std::int64_t n) { return grid_for(n, kThreads, 64); }

// The block's reduction of one value per thread by `combine`, starting from `identity`, returned to
// every thread.
template <class T, class Combine> __device__ inline T block_reduce(T mine, T identity, Combine combine) {
  __shared__ T partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) mine = combine(mine, __shfl_down_sync(0xffffffffu, mine, offset));
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = mine;
  __syncthreads();
  T total = identity;
  for (int w = 0; w < kThreads / 32; ++w) total = combine(total, partial[w]);
  __syncthreads();
  return total;
}
__device__ inline double block_sum(double mine) {
  return block_reduce(mine, 0.0, [](double a, double b) { return a + b; });
}
__device__ inline float block_max(float mine) {
  return block_reduce(mine, -INFINITY, [](float a, float b) { return fmaxf(a, b); });
}

// x[i, j] += bias[j]
template <typename B> __global__ void add_bias(float* x, const B* bias, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = grid_index(); i < rows * cols; i += grid_stride()) x[i] += static_cast<float>(bias[i % cols]);
}

// x *= factor
__global__ void scale(float* x, std::int64_t n, float factor) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) x[i] *= factor;
}

// out[i, :] = x[i, :] − max − log Σ exp(x[i, :] − max): one block per row, as torch's log_softmax.
__global__ void log_softmax_rows(const float* x, float* out, std::int64_t cols) {
  const float* row = x + blockIdx.x * cols;
  float mx = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < cols; j += kThreads) mx = fmaxf(mx, row[j]);
  mx = block_max(mx);
  double sum = 0;
  for (std::int64_t j = threadIdx.x; j < cols; j += kThreads) sum += expf(row[j] - mx);
  const float lse = mx + static_cast<float>(log(block_sum(sum)));
  for (std::int64_t j = threadIdx.x; j < cols; j += kThreads) out[blockIdx.x * cols + j] = row[j] - lse;
}

// nll_loss(reduction="sum") per token: −logp[i, y_i], 0 where ignored.
__global__ void gather_nll(const float* logp, const std::int64_t* targets, std::int64_t rows, std::int64_t cols,
                           std::int64_t ignore_index, double* out) {
  for (std::int64_t i = grid_index(); i < rows; i += grid_stride())
    out[i] = targets[i] == ignore_index ? 0.0 : -static_cast<double>(logp[i * cols + targets[i]]);
}

// out[i] = Σ_j a[i, j]·b[i, j] (a norm² when a == b): one block per row.
__global__ void row_dot(const float* a, const float* b, std::int64_t cols, double* out) {
  double sum = 0;
  for (std::int64_t j = threadIdx.x; j < cols; j += kThreads)
    sum += static_cast<double>(a[blockIdx.x * cols + j]) * b[blockIdx.x * cols + j];
  sum = block_sum(sum);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

__global__ void sqrt_all(double* x, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) x[i] = sqrt(x[i]);
}

// x[i, :] /= max(norm[i], eps)
__global__ void divide_rows(float* x, const double* norm, std::int64_t rows, std::int64_t cols, double eps) {
  for (std::int64_t i = grid_index(); i < rows * cols; i += grid_stride())
    x[i] = static_cast<float>(x[i] / fmax(norm[i / cols], eps));
}

// cos[i] = (a·b)[i] / (max(‖a‖, eps)·max(‖b‖, eps))
__global__ void cosine(const double* ab, const double* na, const double* nb, std::int64_t rows, double* out) {
  for (std::int64_t i = grid_index(); i < rows; i += grid_stride())
    out[i] = ab[i] / (fmax(na[i], kCosineEps) * fmax(nb[i], kCosineEps));
}

// loss = hard_scale·Σ hard + soft_scale·Σ (1 − cos): one block.
__global__ void total_loss(const double* hard, const double* cos, std::int64_t rows, double hard_scale,
                           double soft_scale, double* loss) {
  double sum = 0;
  for (std::int64_t i = threadIdx.x; i < rows; i += kThreads) sum += hard_scale * hard[i] + soft_scale * (1.0 - cos[i]);
  sum = block_sum(sum);
  if (threadIdx.x == 0) *loss = sum;
}

// Backward of cosine_similarity w.r.t. a, times the loss's −w_soft·β/N:
// g_a = −soft_scale·(b/(|a||b|) − (a·b)/(|a|²|b|)·a/‖a‖), |·| the eps-clamped norms.
__global__ void cosine_backward(const float* a, const float* b, const double* ab, const double* na, const double* nb,
                                std::int64_t rows, std::int64_t cols, double soft_scale, float* grad_a) {
  for (std::int64_t i = grid_index(); i < rows * cols; i += grid_stride()) {
    const std::int64_t r = i / cols;
    const double da = fmax(na[r], kCosineEps), db = fmax(nb[r], kCosineEps);
    const double inv_norm = na[r] > 0 ? 1.0 / na[r] : 0.0;
    grad_a[i] = static_cast<float>(-soft_scale * (b[i] / (da * db) - ab[r] / (da * da * db) * a[i] * inv_norm));
  }
}

// Backward of normalize (a = u/max(‖u‖, eps), here u = a·divisor), then of u = s/T, plus the hard
// loss's (softmax − onehot)·hard_scale; written in the matmul's dtype as autograd casts it.
template <typename T> __global__ void logits_backward(const float* grad_a, const float* a, const double* ga_dot_a,
                                                      const double* nu, const float* logp, const std::int64_t* targets,
                                                      std::int64_t rows, std::int64_t cols, double temperature,
                                                      double hard_scale, std::int64_t ignore_index, T* dz) {
  for (std::int64_t i = grid_index(); i < rows * cols; i += grid_stride()) {
    const std::int64_t r = i / cols, j = i % cols;
    const double divisor = fmax(nu[r], kNormalizeEps);
    const double u = a[i] * divisor;
    const double ga_dot_u = ga_dot_a[r] * divisor;
    const double norm_grad = nu[r] > kNormalizeEps ? 1.0 / nu[r] : 0.0;
    const double grad_u = grad_a[i] / divisor - ga_dot_u / (divisor * divisor) * u * norm_grad;
    double g = grad_u / temperature;
    if (targets[r] != ignore_index)
      g += hard_scale * (exp(static_cast<double>(logp[i])) - (j == targets[r] ? 1.0 : 0.0));
    dz[i] = static_cast<T>(static_cast<float>(g));
  }
}

template <typename T> class NaiveInstance final : public DistillInstance {
 public:
  // Logits in fp32 (D fp32), then the backward products in dtype, all unchunked.
  explicit NaiveInstance(const Problem& p)
      : DistillInstance(p), products_(unchunked_products(lt_.get(), p, CUDA_R_32F)) {
    const auto logits = static_cast<std::size_t>(p.tokens * p.vocab);
    const auto rows = static_cast<std::size_t>(p.tokens);
    s_ = memory_.allocate<float>(logits, "student logits (fp32)");
    t_ = memory_.allocate<float>(logits, "teacher logits (fp32)");
    logp_ = memory_.allocate<float>(logits, "log_softmax of the student logits");
    grad_a_ = memory_.allocate<float>(logits, "gradient of the normalised student logits");
    dz_ = memory_.allocate<T>(logits, "dL/ds in the matmul dtype");
    for (double** v : {&hard_, &nu_, &nw_, &na_, &nb_, &ab_, &cos_, &ga_dot_a_})
      *v = memory_.allocate<double>(rows, "per-token value");
  }

 protected:
  const char* name() const override { return "naive"; }
  std::unique_ptr<DistillInstance> make_counterpart() const override { return make_fused(problem_, {}); }

  void forward(bool with_grad) override {
    const Problem& p = problem_;
    const std::int64_t rows = p.tokens, cols = p.vocab, n = rows * cols;
    const double hard_scale = p.weight_hard_loss / divisor_, soft_scale = p.weight_soft_loss * p.beta / divisor_;
    products_.student.run(in_.ws, in_.xs, s_, 0.0f, nullptr, workspace_, stream_);
    products_.teacher.run(in_.wt, in_.xt, t_, 0.0f, nullptr, workspace_, stream_);
    if (p.bias) {
      add_bias<<<blocks_for(n), kThreads, 0, stream_>>>(s_, static_cast<const T*>(in_.bs), rows, cols);
      add_bias<<<blocks_for(n), kThreads, 0, stream_>>>(t_, static_cast<const T*>(in_.bt), rows, cols);
    }
    log_softmax_rows<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(s_, logp_, cols);
    gather_nll<<<blocks_for(rows), kThreads, 0, stream_>>>(logp_, in_.targets, rows, cols, p.ignore_index, hard_);
    scale<<<blocks_for(n), kThreads, 0, stream_>>>(s_, n, static_cast<float>(1.0 / p.temperature));
    scale<<<blocks_for(n), kThreads, 0, stream_>>>(t_, n, static_cast<float>(1.0 / p.temperature));
    row_dot<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(s_, s_, cols, nu_);
    row_dot<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(t_, t_, cols, nw_);
    sqrt_all<<<blocks_for(rows), kThreads, 0, stream_>>>(nu_, rows);
    sqrt_all<<<blocks_for(rows), kThreads, 0, stream_>>>(nw_, rows);
    divide_rows<<<blocks_for(n), kThreads, 0, stream_>>>(s_, nu_, rows, cols, kNormalizeEps);  // s_ now holds a
    divide_rows<<<blocks_for(n), kThreads, 0, stream_>>>(t_, nw_, rows, cols, kNormalizeEps);  // t_ now holds b
    row_dot<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(s_, s_, cols, na_);
    row_dot<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(t_, t_, cols, nb_);
    sqrt_all<<<blocks_for(rows), kThreads, 0, stream_>>>(na_, rows);
    sqrt_all<<<blocks_for(rows), kThreads, 0, stream_>>>(nb_, rows);
    row_dot<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(s_, t_, cols, ab_);
    cosine<<<blocks_for(rows), kThreads, 0, stream_>>>(ab_, na_, nb_, rows, cos_);
    total_loss<<<1, kThreads, 0, stream_>>>(hard_, cos_, rows, hard_scale, soft_scale, loss_);
    KS_CUDA_LAUNCHED();
    if (!with_grad) return;

    cosine_backward<<<blocks_for(n), kThreads, 0, stream_>>>(s_, t_, ab_, na_, nb_, rows, cols, soft_scale, grad_a_);
    row_dot<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(grad_a_, s_, cols, ga_dot_a_);
    logits_backward<<<blocks_for(n), kThreads, 0, stream_>>>(grad_a_, s_, ga_dot_a_, nu_, logp_, in_.targets, rows,
                                                             cols, p.temperature, hard_scale, p.ignore_index, dz_);
    KS_CUDA_LAUNCHED();
    products_.grad_x.run(in_.ws, dz_, grad_xs_, 0.0f, nullptr, workspace_, stream_);
    products_.grad_w.run(in_.xs, dz_, grad_ws_, 0.0f, nullptr, workspace_, stream_);
    if (grad_bs_) {
      KS_CUDA(cudaMemsetAsync(grad_bs_, 0, sizeof(float) * p.vocab, stream_));
      add_column_sums(dz_, data_type(p), rows, cols, grad_bs_, stream_);
    }
  }

 private:
  float *s_ = nullptr, *t_ = nullptr, *logp_ = nullptr, *grad_a_ = nullptr;
  T* dz_ = nullptr;
  double *hard_ = nullptr, *nu_ = nullptr, *nw_ = nullptr, *na_ = nullptr, *nb_ = nullptr, *ab_ = nullptr,
         *cos_ = nullptr, *ga_dot_a_ = nullptr;
  PassProducts products_;
};

}  // namespace

std::unique_ptr<DistillInstance> make_naive(const Problem& p) {
  if (p.bf16) return std::make_unique<NaiveInstance<__nv_bfloat16>>(p);
  return std::make_unique<NaiveInstance<float>>(p);
}

}  // namespace cuda
}  // namespace ks::distill

KS_IMPLEMENTATION(distill_cosine_loss, naive, cuda, "unchunked fp32 logits, one step per operation, as PyTorch eager") {
  return ks::distill::make_naive_instance(ks::distill::Problem(params));
}
