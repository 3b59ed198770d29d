// distill_cosine_loss's `fused` implementation: chunked over tokens so memory stays flat in BT. Per
// chunk: s = Xs·Wsᵀ (+bs) with cuBLASLt (bf16 in, fp32 accumulation, bf16 out, bias in the
// epilogue); then per teacher sub-chunk t = Xt·Wtᵀ (+bt) and one row kernel that reads each row of s
// and t for the row statistics, adds the row's loss to a device accumulator and writes dL/ds in place
// of s; then dXs = dZ·Ws and dWs (+)= dZᵀ·Xs with cuBLASLt. No host synchronisation inside a pass.
// With the overlap schedule the row kernels run on a second stream, each beside the next teacher
// product (two teacher buffers), joined back into stream() with events (FusedPlan, cuda_distill.h).
#include <cooperative_groups.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/distill_cosine/cuda_rows.h"
#include "kernels/distill_cosine/cuda_support.h"

namespace ks::distill {

namespace cuda {
namespace {

constexpr int kRowThreads = 256;
constexpr unsigned kClusterBlocks = 8;  // the portable maximum cluster size
constexpr std::size_t kClusterSharedLimit = 200u << 10;

// Row kernel, any GPU: one block per row; pass 1 reads s and t for the statistics, pass 2 reads them
// again and writes dL/ds over s. VEC elements per 16-byte access (1 when V is not a multiple of VEC).
template <typename T, int VEC> __global__ void __launch_bounds__(kRowThreads)
    row_two_pass(T* s, const T* t, const std::int64_t* targets, std::int64_t vocab, LossScales scales, bool with_grad,
                 double* loss) {
  using P = Pack<T, VEC>;
  const std::int64_t row = blockIdx.x;
  P* s_row = reinterpret_cast<P*>(s + row * vocab);
  const P* t_row = reinterpret_cast<const P*>(t + row * vocab);
  const std::int64_t packs = vocab / VEC;
  RowStats stats = empty_stats();
  for (std::int64_t i = threadIdx.x; i < packs; i += kRowThreads)
    accumulate(stats, load_pack(s_row + i), load_pack(t_row + i));
  stats = block_combine(stats);

  __shared__ RowTerms terms;
  const std::int64_t target = targets[row];
  const bool labelled = target != scales.ignore_index;
  if (threadIdx.x == 0) {
    const float s_target = labelled ? to_float(s[row * vocab + target]) : 0.0f;
    terms = row_terms(stats, s_target, labelled, scales);
    atomicAdd(loss, terms.loss);
  }
  __syncthreads();
  if (!with_grad) return;
  const RowTerms k = terms;
  for (std::int64_t i = threadIdx.x; i < packs; i += kRowThreads) {
    const P gradient = gradient_pack(k, load_pack(s_row + i), load_pack(t_row + i), target_lane<VEC>(i, 0, target));
    store_pack(s_row + i, gradient);
  }
}

// Row kernel for sm_90: a cluster of kClusterBlocks blocks per row, each holding one segment of s and
// t in shared memory, so the row is read from memory once. The blocks exchange their partial
// statistics through distributed shared memory; every block combines them in the same order, so all
// use identical row terms.
// Three blocks fit on an SM (shared memory); saying so lets ptxas use up to 85 registers (it takes
// 80, against 48 with the default bound), and its unrolled loads keep more packs in flight: 0.645 ms
// against 0.772 ms per 2048 rows (bench/results/distill_cosine-notes.md).
template <typename T, int VEC> __global__ void __launch_bounds__(kRowThreads, 3)
    row_cluster(T* s, const T* t, const std::int64_t* targets, std::int64_t vocab, std::int64_t segment,
                LossScales scales, bool with_grad, double* loss) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  using P = Pack<T, VEC>;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const std::int64_t row = blockIdx.y;
  const std::int64_t begin = std::min<std::int64_t>(rank * segment, vocab);
  const std::int64_t end = std::min<std::int64_t>(begin + segment, vocab);
  const std::int64_t packs = (end - begin) / VEC;
  extern __shared__ __align__(16) unsigned char shared[];
  P* s_seg = reinterpret_cast<P*>(shared);
  P* t_seg = s_seg + segment / VEC;
  P* s_row = reinterpret_cast<P*>(s + row * vocab + begin);
  const P* t_row = reinterpret_cast<const P*>(t + row * vocab + begin);

  RowStats stats = empty_stats();
#pragma unroll 4
  for (std::int64_t i = threadIdx.x; i < packs; i += kRowThreads) {
    const P sp = load_pack(s_row + i), tp = load_pack(t_row + i);
    store_pack(s_seg + i, sp);
    store_pack(t_seg + i, tp);
    accumulate(stats, sp, tp);
  }
  stats = block_combine(stats);

  __shared__ RowStats partial;
  __shared__ float partial_target;  // s[target] in the block that holds it, else 0
  __shared__ RowTerms terms;
  const std::int64_t target = targets[row];
  const bool labelled = target != scales.ignore_index;
  if (threadIdx.x == 0) {
    partial = stats;
    const bool mine = labelled && target >= begin && target < end;
    partial_target = mine ? to_float(s[row * vocab + target]) : 0.0f;
  }
  cluster.sync();
  if (threadIdx.x == 0) {
    RowStats all = empty_stats();
    float s_target = 0;
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) {
      all = combine(all, *cluster.map_shared_rank(&partial, r));
      s_target += *cluster.map_shared_rank(&partial_target, r);
    }
    terms = row_terms(all, s_target, labelled, scales);
    if (rank == 0) atomicAdd(loss, terms.loss);
  }
  // No block may leave while another still reads its partials; this also publishes `terms`.
  cluster.sync();
  if (!with_grad) return;
  const RowTerms k = terms;
  for (std::int64_t i = threadIdx.x; i < packs; i += kRowThreads) {
    const P gradient = gradient_pack(k, load_pack(s_seg + i), load_pack(t_seg + i), target_lane<VEC>(i, begin, target));
    store_pack(s_row + i, gradient);
  }
#else
  (void)s, (void)t, (void)targets, (void)vocab, (void)segment, (void)scales, (void)with_grad, (void)loss;
#endif
}

// The largest power of two, at most 256, dividing `bytes`: the alignment of base + bytes when base is
// a cudaMalloc pointer.
std::uint32_t alignment_of(std::int64_t bytes) {
  std::uint32_t alignment = 256;
  while (alignment > 1 && bytes % alignment != 0) alignment /= 2;
  return alignment;
}

// The launch of row_cluster on `rows` rows: a cluster of kClusterBlocks blocks a row.
struct ClusterLaunch {
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t config{};
  ClusterLaunch(std::int64_t rows, std::size_t shared, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = kClusterBlocks;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(kClusterBlocks, static_cast<unsigned>(rows), 1);
    config.blockDim = dim3(kRowThreads, 1, 1);
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // config points into it
};

// The products of one chunk of `rows` tokens (student logits and the two gradients); the teacher
// products are made per sub-chunk size.
struct ChunkProducts {
  Matmul student, grad_x, grad_w;
};

// A CUDA event for ordering only (no timing).
struct OrderEvent : Event {
  OrderEvent() : Event(cudaEventDisableTiming) {}
  // Work enqueued on `waiter` after this call starts after the work enqueued on `recorder` before it.
  void order(cudaStream_t recorder, cudaStream_t waiter) {
    record(recorder);
    wait(waiter);
  }
  void record(cudaStream_t stream) { KS_CUDA(cudaEventRecord(*this, stream)); }
  void wait(cudaStream_t stream) { KS_CUDA(cudaStreamWaitEvent(stream, *this, 0)); }
};

template <typename T> class FusedInstance final : public DistillInstance {
 public:
  FusedInstance(const Problem& p, const FusedOptions& options) : DistillInstance(p), plan_(fused_plan(p, options)) {
    s_ = memory_.allocate<T>(static_cast<std::size_t>(plan_.chunk * p.vocab), "student logits of a chunk (then dL/ds)");
    for (int b = 0; b < plan_.teacher_buffers(); ++b)
      t_[b] =
          memory_.allocate<T>(static_cast<std::size_t>(plan_.teacher_rows * p.vocab), "teacher logits of a sub-chunk");
    scales_ = {p.weight_hard_loss / divisor_, p.weight_soft_loss * p.beta / divisor_, p.temperature, p.ignore_index};
    vec_ = p.vocab % (16 / sizeof(T)) == 0 ? static_cast<int>(16 / sizeof(T)) : 1;
    for (std::int64_t rows : {plan_.chunk, p.tokens % plan_.chunk}) {
      if (rows == 0 || products_.count(rows)) continue;
      products_.emplace(rows, make_products(rows));
      for (std::int64_t sub : {std::min(plan_.teacher_rows, rows), rows % plan_.teacher_rows})
        if (sub > 0 && !teacher_.count(sub)) teacher_.emplace(sub, make_teacher_product(sub));
    }
    row_kernel_ = choose_row_kernel(options.row_kernel);
    if (plan_.schedule == Schedule::overlap) {
      // Higher priority, so that the row kernel's blocks take SMs as the running product's blocks
      // retire instead of waiting behind all of them.
      int least = 0, greatest = 0;
      KS_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      row_stream_.emplace(greatest);
    }
  }

  // The row kernel alone, with gradients, on the rows of the first teacher buffer (RowPassInstance).
  void run_row_kernel_alone() { launch_rows(s_, t_[0], plan_.teacher_rows, in_.targets, true, stream_); }

 protected:
  const char* name() const override { return "fused"; }
  std::unique_ptr<DistillInstance> make_counterpart() const override { return make_naive(problem_); }

  void forward(bool with_grad) override {
    const Problem& p = problem_;
    const std::int64_t hs = p.student_hidden();
    const bool overlap = plan_.schedule == Schedule::overlap;
    cudaStream_t rows_stream = overlap ? *row_stream_ : stream_;
    KS_CUDA(cudaMemsetAsync(loss_, 0, sizeof(double), stream_));
    if (with_grad && grad_bs_) KS_CUDA(cudaMemsetAsync(grad_bs_, 0, sizeof(float) * p.vocab, stream_));
    // The row stream starts after everything enqueued on stream() so far (the loss reset above).
    if (overlap) fork_.order(stream_, *row_stream_);
    const auto* xs = static_cast<const T*>(in_.xs);
    const auto* xt = static_cast<const T*>(in_.xt);
    int buffer = 0;
    for (std::int64_t first = 0; first < p.tokens; first += plan_.chunk) {
      const std::int64_t rows = std::min(plan_.chunk, p.tokens - first);
      const ChunkProducts& g = products_.at(rows);
      g.student.run(in_.ws, xs + first * hs, s_, 0.0f, in_.bs, workspace_, stream_);
      for (std::int64_t sub = 0; sub < rows; sub += plan_.teacher_rows) {
        const std::int64_t sub_rows = std::min(plan_.teacher_rows, rows - sub);
        T* t = t_[buffer];
        // The teacher buffer is free once the row kernel that last read it has finished.
        if (overlap) buffer_free_[buffer].wait(stream_);
        teacher_.at(sub_rows).run(in_.wt, xt + (first + sub) * p.hidden, t, 0.0f, in_.bt, workspace_, stream_);
        if (overlap) teacher_ready_[buffer].order(stream_, *row_stream_);
        launch_rows(s_ + sub * p.vocab, t, sub_rows, in_.targets + first + sub, with_grad, rows_stream);
        if (overlap) buffer_free_[buffer].record(*row_stream_);
        buffer = (buffer + 1) % plan_.teacher_buffers();
      }
      // Join: the gradient products read dL/ds, and the next chunk's student product overwrites it.
      if (overlap) join_.order(*row_stream_, stream_);
      if (!with_grad) continue;
      if (grad_bs_) add_column_sums(s_, data_type(p), rows, p.vocab, grad_bs_, stream_);
      g.grad_x.run(in_.ws, s_, static_cast<T*>(grad_xs_) + first * hs, 0.0f, nullptr, workspace_, stream_);
      g.grad_w.run(xs + first * hs, s_, grad_ws_, first == 0 ? 0.0f : 1.0f, nullptr, workspace_, stream_);
    }
  }

 private:
  // Chunks start at multiples of the chunk and sub-chunks at multiples of teacher_rows: the largest
  // alignment every row offset into Xs, Xt and dXs keeps.
  std::uint32_t row_alignment() const {
    const Problem& p = problem_;
    const auto es = static_cast<std::int64_t>(sizeof(T));
    std::uint32_t alignment = 256;
    for (std::int64_t rows : {plan_.chunk, plan_.teacher_rows})
      alignment =
          std::min({alignment, alignment_of(rows * p.student_hidden() * es), alignment_of(rows * p.hidden * es)});
    return alignment;
  }

  ChunkProducts make_products(std::int64_t rows) const {
    const Problem& p = problem_;
    const std::uint32_t alignment = row_alignment();
    return {logits_product(lt_.get(), p, rows, p.student_hidden(), data_type(p), p.bias, alignment),
            input_gradient_product(lt_.get(), p, rows, alignment),
            weight_gradient_product(lt_.get(), p, rows, alignment)};
  }

  Matmul make_teacher_product(std::int64_t rows) const {
    const Problem& p = problem_;
    return logits_product(lt_.get(), p, rows, p.hidden, data_type(p), p.bias, row_alignment());
  }

  std::int64_t cluster_segment() const {
    const std::int64_t per_block = (problem_.vocab + kClusterBlocks - 1) / kClusterBlocks;
    return (per_block + vec_ - 1) / vec_ * vec_;
  }
  std::size_t cluster_shared_bytes() const { return 2 * static_cast<std::size_t>(cluster_segment()) * sizeof(T); }

  template <int VEC> bool cluster_launchable() const {
    const std::size_t shared = cluster_shared_bytes();
    if (shared > kClusterSharedLimit || plan_.teacher_rows > 65535) return false;
    if (cudaFuncSetAttribute(row_cluster<T, VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(shared)) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    const ClusterLaunch launch(1, shared, stream_);
    int clusters = 0;
    const cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, row_cluster<T, VEC>, &launch.config);
    if (status != cudaSuccess) cudaGetLastError();
    return status == cudaSuccess && clusters > 0;
  }

  // Automatic is the two-pass kernel (RowKernel::automatic says why); the cluster kernel only on request.
  RowKernel choose_row_kernel(RowKernel wanted) const {
    if (wanted != RowKernel::cluster) return RowKernel::two_pass;
    const bool possible = device_attribute(cudaDevAttrComputeCapabilityMajor) >= 9 &&
                          (vec_ == 1 ? cluster_launchable<1>() : cluster_launchable<16 / sizeof(T)>());
    if (!possible)
      throw std::runtime_error(concat("distill_cosine_loss: the cluster row kernel needs sm_90 and ",
                                      cluster_shared_bytes(), " bytes of shared memory per block (vocab ",
                                      problem_.vocab, ")"));
    return RowKernel::cluster;
  }

  // The row kernel on `rows` rows of s (overwritten with dL/ds when with_grad) and t.
  template <int VEC> void launch_rows_as(T* s, const T* t, std::int64_t rows, const std::int64_t* targets,
                                         bool with_grad, cudaStream_t stream) {
    if (row_kernel_ == RowKernel::cluster) {
      const ClusterLaunch launch(rows, cluster_shared_bytes(), stream);
      KS_CUDA(cudaLaunchKernelEx(&launch.config, row_cluster<T, VEC>, s, t, targets, problem_.vocab, cluster_segment(),
                                 scales_, with_grad, loss_));
    } else {
      row_two_pass<T, VEC><<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(s, t, targets, problem_.vocab,
                                                                                    scales_, with_grad, loss_);
      KS_CUDA_LAUNCHED();
    }
  }

  void launch_rows(T* s, const T* t, std::int64_t rows, const std::int64_t* targets, bool with_grad,
                   cudaStream_t stream) {
    if (vec_ == 1) launch_rows_as<1>(s, t, rows, targets, with_grad, stream);
    else launch_rows_as<16 / sizeof(T)>(s, t, rows, targets, with_grad, stream);
  }

  FusedPlan plan_;
  T* s_ = nullptr;
  T* t_[2] = {nullptr, nullptr};
  LossScales scales_;
  int vec_ = 1;
  RowKernel row_kernel_ = RowKernel::two_pass;
  std::map<std::int64_t, ChunkProducts> products_;  // by chunk rows
  std::map<std::int64_t, Matmul> teacher_;          // by sub-chunk rows
  OrderEvent fork_, join_, teacher_ready_[2], buffer_free_[2];
  std::optional<Stream> row_stream_;  // overlap only; destroyed first, once its work is done
};

// make_row_pass_instance: a fused instance whose buffers hold the logits of a no-grad pass, bound to
// its row kernel alone.
template <typename T> class RowPassInstance final : public Instance {
 public:
  RowPassInstance(const Problem& p, const FusedOptions& options)
      : fused_(std::make_unique<FusedInstance<T>>(p, options)) {
    fused_->bind("no-grad-forward").run();
    KS_CUDA(cudaStreamSynchronize(static_cast<cudaStream_t>(fused_->stream())));
  }
  BoundMode bind(const std::string&) override {
    return {[this] { fused_->run_row_kernel_alone(); },
            [] {
              return CheckResult{true, "the row kernel alone computes no loss"};
            }};
  }
  std::size_t device_bytes() const override { return fused_->device_bytes(); }
  void* stream() const override { return fused_->stream(); }

 private:
  std::unique_ptr<FusedInstance<T>> fused_;
};

// The floor: the four products of a full pass, unchunked (M = BT), on the same inputs.
template <typename T> class GemmFloorInstance final : public Instance {
 public:
  explicit GemmFloorInstance(const Problem& p) : products_(unchunked_products(lt_.get(), p, data_type(p))) {
    in_ = generate_inputs(p, memory_, stream_);
    const std::int64_t hs = p.student_hidden();
    const std::size_t logits = static_cast<std::size_t>(p.tokens * p.vocab);
    s_ = memory_.allocate<T>(logits, "student logits");
    t_ = memory_.allocate<T>(logits, "teacher logits");
    grad_xs_ = memory_.allocate<T>(static_cast<std::size_t>(p.tokens * hs), "grad of Xs");
    grad_ws_ = memory_.allocate<T>(static_cast<std::size_t>(p.vocab * hs), "grad of Ws");
    workspace_ = memory_.allocate<char>(kCublasWorkspaceBytes, "cuBLASLt workspace");
    stream_.synchronize();
  }

  // forward and full make the logits and, in the same pass, the gradients (four products);
  // no-grad-forward makes the logits alone (two); backward only scales the stored gradients.
  BoundMode bind(const std::string& mode) override {
    if (mode == "backward")
      throw std::invalid_argument("gemm_floor: backward multiplies no matrices (it scales the stored gradients)");
    const bool gradients = mode != "no-grad-forward";
    return {[this, gradients] {
              products_.student.run(in_.ws, in_.xs, s_, 0.0f, nullptr, workspace_, stream_);
              products_.teacher.run(in_.wt, in_.xt, t_, 0.0f, nullptr, workspace_, stream_);
              if (!gradients) return;
              // The student logits stand in for dL/ds: same shape and dtype, and not zeros.
              products_.grad_x.run(in_.ws, s_, grad_xs_, 0.0f, nullptr, workspace_, stream_);
              products_.grad_w.run(in_.xs, s_, grad_ws_, 0.0f, nullptr, workspace_, stream_);
            },
            [] {
              return CheckResult{true, "the GEMM floor computes no loss: nothing to compare"};
            }};
  }
  std::size_t device_bytes() const override { return memory_.total_bytes(); }
  void* stream() const override { return stream_.get(); }

 private:
  DeviceMemory memory_;
  LtHandle lt_ = make_lt_handle();
  Stream stream_;  // destroyed (once its work is done) before lt_ and memory_
  DeviceInputs in_;
  T *s_ = nullptr, *t_ = nullptr, *grad_xs_ = nullptr, *grad_ws_ = nullptr;
  void* workspace_ = nullptr;
  PassProducts products_;
};

}  // namespace

std::unique_ptr<DistillInstance> make_fused(const Problem& p, const FusedOptions& options) {
  if (p.bf16) return std::make_unique<FusedInstance<__nv_bfloat16>>(p, options);
  return std::make_unique<FusedInstance<float>>(p, options);
}

}  // namespace cuda

std::unique_ptr<Instance> make_row_pass_instance(const Problem& p, const FusedOptions& options) {
  if (p.bf16) return std::make_unique<cuda::RowPassInstance<__nv_bfloat16>>(p, options);
  return std::make_unique<cuda::RowPassInstance<float>>(p, options);
}

std::unique_ptr<Instance> make_gemm_floor_instance(const Problem& p) {
  if (p.bf16) return std::make_unique<cuda::GemmFloorInstance<__nv_bfloat16>>(p);
  return std::make_unique<cuda::GemmFloorInstance<float>>(p);
}

}  // namespace ks::distill

KS_IMPLEMENTATION(distill_cosine_loss, gemm_floor, cuda, "the mode's matrix products alone, cuBLASLt: the floor") {
  return ks::distill::make_gemm_floor_instance(ks::distill::Problem(params));
}

KS_IMPLEMENTATION(distill_cosine_loss, fused, cuda, "chunked over tokens, cuBLASLt products and one fused row kernel") {
  return ks::distill::make_fused_instance(ks::distill::Problem(params));
}
