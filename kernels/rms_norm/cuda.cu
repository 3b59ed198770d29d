// rms_norm's `cuda` implementation: memory-bound, one kernel per pass, fp32 accumulation.
//
// Forward: a row is handled by a row group of `width` threads (a power of two from 32 to kThreads:
// about kCached 16-byte vectors a thread), and short rows share a block; it reads each row once
// into registers (rows longer than width·kCached vectors read their tail a second time, from
// cache), sums its squares and writes y and rstd; its blocks have 256 threads, or one row group of
// 512. Backward runs sm_count() blocks of kThreads over all rows: the pipelined kernel (rows of
// more than kThreads and at most 4·kThreads vectors) computes one row a block while the next rows
// arrive in shared memory; the row-group kernel (shorter or longer rows, or rows of scalar accesses)
// computes a row a row group, its dw sums in shared or global memory. Both write each block's fp32 dw partial sums, and
// a second small kernel sums them into dw, with no atomics. Loads and stores are 16 bytes wide when hidden is a
// multiple of 16 bytes' worth of elements. README.md has the figures, and the variants tried.
#include <cuda_bf16.h>

#include <algorithm>
#include <memory>
#include <type_traits>

#include "kernels/common/cuda.h"
#include "kernels/rms_norm/rms_norm.h"

namespace ks::rms_norm {
namespace {

constexpr int kThreads = 512;  // threads of a backward block, and the most of a forward block
constexpr int kCached = 4;     // vectors of a row a thread keeps in registers between its two passes
constexpr int kDwSlices = 8;   // threads that share one column in the dw kernel

template <class T, int N> struct alignas(sizeof(T) * N) Pack { T v[N]; };

// Waits for the `width` threads of this thread's row group only (a named barrier a group, 1 to 16),
// so that the other groups of the block go on loading and storing: with one __syncthreads for the
// block, backward took 5-7% longer on an H100 (bench/results/rms_norm-h100.md).
__device__ inline void group_barrier(int width) {
  asm volatile("bar.sync %0, %1;" ::"r"(1 + static_cast<int>(threadIdx.x) / width), "r"(width) : "memory");
}

// The sum of `value` over the `width` threads of a row group; the threads of a group call it
// together (width is the same for the whole block).
__device__ float group_sum(float value, int width, float* scratch) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if (width == 32) return value;
  const int warps = width / 32, warp = static_cast<int>(threadIdx.x) / 32;
  if (threadIdx.x % 32 == 0) scratch[warp] = value;
  group_barrier(width);
  float total = 0;
  for (int i = warp / warps * warps; i < (warp / warps + 1) * warps; ++i) total += scratch[i];
  group_barrier(width);
  return total;
}

// The dtype and casting mode as constants of the kernel, so that the compiler drops the other modes.
template <class T, Casting C> __device__ Problem specialise(Problem p) {
  p.bf16 = std::is_same_v<T, __nv_bfloat16>;
  p.casting = C;
  return p;
}

// rstd of `row` as forward saved it: in the dtype for none, fp32 otherwise.
template <class T, Casting C> __device__ float saved_rstd(const void* rstd_in, std::int64_t row) {
  if constexpr (C == Casting::none) return to_float(static_cast<const T*>(rstd_in)[row]);
  else return static_cast<const float*>(rstd_in)[row];
}

template <class T, int N, Casting C> __global__ void __launch_bounds__(kThreads)
    forward_kernel(Problem problem, int width, const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                   void* __restrict__ rstd_out) {
  using V = Pack<T, N>;
  __shared__ float scratch[kThreads / 32];
  const Problem p = specialise<T, C>(problem);
  const int lane = static_cast<int>(threadIdx.x) % width, vectors = static_cast<int>(p.hidden / N);
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / width) + threadIdx.x / width;
  const bool active = row < p.tokens;
  const V* xr = reinterpret_cast<const V*>(x + (active ? row : 0) * p.hidden);
  const V* wv = reinterpret_cast<const V*>(w);

  V cached[kCached];
  float sum = 0;
#pragma unroll
  for (int k = 0; k < kCached; ++k)
    if (const int v = lane + k * width; active && v < vectors) cached[k] = xr[v];
#pragma unroll
  for (int k = 0; k < kCached; ++k)
    if (const int v = lane + k * width; active && v < vectors)
#pragma unroll
      for (int j = 0; j < N; ++j) sum += p.square(to_float(cached[k].v[j]));
  for (int v = lane + kCached * width; active && v < vectors; v += width) {
    const V xv = xr[v];
#pragma unroll
    for (int j = 0; j < N; ++j) sum += p.square(to_float(xv.v[j]));
  }
  const float rstd = p.rstd(group_sum(sum, width, scratch));
  if (!active) return;
  if (lane == 0) {
    if constexpr (C == Casting::none) static_cast<T*>(rstd_out)[row] = from_float<T>(p.saved(rstd));
    else static_cast<float*>(rstd_out)[row] = rstd;
  }
  V* yr = reinterpret_cast<V*>(y + row * p.hidden);
  const auto write = [&](int v, const V& xv) {
    const V wk = wv[v];
    V out;
#pragma unroll
    for (int j = 0; j < N; ++j) out.v[j] = from_float<T>(p.y(to_float(xv.v[j]), to_float(wk.v[j]), rstd));
    yr[v] = out;
  };
#pragma unroll
  for (int k = 0; k < kCached; ++k)
    if (const int v = lane + k * width; v < vectors) write(v, cached[k]);
  for (int v = lane + kCached * width; v < vectors; v += width) write(v, xr[v]);
}

// dw partial sums are kept transposed, element j of vector v at j·vectors + v, so that the threads of
// a warp touch consecutive floats (no shared-memory bank conflicts).
template <class T, int N, Casting C> __global__ void __launch_bounds__(kThreads)
    backward_kernel(Problem problem, int width, const T* __restrict__ x, const T* __restrict__ w,
                    const T* __restrict__ dy, const void* __restrict__ rstd_in, T* __restrict__ dx,
                    float* __restrict__ partials, bool shared_dw) {
  using V = Pack<T, N>;
  extern __shared__ float shared_partials[];  // groups × hidden, when shared_dw
  __shared__ float scratch[kThreads / 32];
  const Problem p = specialise<T, C>(problem);
  const int groups = kThreads / width, group = static_cast<int>(threadIdx.x) / width;
  const int lane = static_cast<int>(threadIdx.x) % width, vectors = static_cast<int>(p.hidden / N);
  const V* wv = reinterpret_cast<const V*>(w);
  // This row group's dw partial sums: in shared memory, or its own row of `partials`.
  float* acc = shared_dw ? shared_partials + group * p.hidden
                         : partials + (static_cast<std::int64_t>(blockIdx.x) * groups + group) * p.hidden;
  for (int v = lane; v < vectors; v += width)  // this thread's columns: no other thread touches them
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j * vectors + v] = 0;

  // Every thread runs the same number of iterations (group_sum synchronises the row group).
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * groups; first < p.tokens;
       first += static_cast<std::int64_t>(gridDim.x) * groups) {
    const std::int64_t row = first + group;
    const bool active = row < p.tokens;
    const std::int64_t start = (active ? row : 0) * p.hidden;
    const V *xr = reinterpret_cast<const V*>(x + start), *dyr = reinterpret_cast<const V*>(dy + start);
    const float rstd = active ? saved_rstd<T, C>(rstd_in, row) : 0.0f;

    V cached_x[kCached], cached_dy[kCached];
    float dot = 0;
    const auto add_dot = [&](int v, const V& xv, const V& dyv) {
      const V wk = wv[v];
#pragma unroll
      for (int j = 0; j < N; ++j) dot += p.m(to_float(dyv.v[j]), to_float(wk.v[j])) * to_float(xv.v[j]);
    };
#pragma unroll
    for (int k = 0; k < kCached; ++k)
      if (const int v = lane + k * width; active && v < vectors) cached_x[k] = xr[v], cached_dy[k] = dyr[v];
#pragma unroll
    for (int k = 0; k < kCached; ++k)
      if (const int v = lane + k * width; active && v < vectors) add_dot(v, cached_x[k], cached_dy[k]);
    for (int v = lane + kCached * width; active && v < vectors; v += width) add_dot(v, xr[v], dyr[v]);
    dot = group_sum(dot, width, scratch);
    if (!active) continue;

    const float c = p.c(rstd, dot);
    V* dxr = reinterpret_cast<V*>(dx + row * p.hidden);
    const auto finish = [&](int v, const V& xv, const V& dyv) {
      const V wk = wv[v];
      V out;
#pragma unroll
      for (int j = 0; j < N; ++j) {
        const float xj = to_float(xv.v[j]), dyj = to_float(dyv.v[j]);
        out.v[j] = from_float<T>(p.dx_sum(xj, p.m(dyj, to_float(wk.v[j])), rstd, c));
        acc[j * vectors + v] += p.dw_term(xj, dyj, rstd);
      }
      dxr[v] = out;
    };
#pragma unroll
    for (int k = 0; k < kCached; ++k)
      if (const int v = lane + k * width; v < vectors) finish(v, cached_x[k], cached_dy[k]);
    for (int v = lane + kCached * width; v < vectors; v += width) finish(v, xr[v], dyr[v]);
  }

  if (!shared_dw) return;
  __syncthreads();  // the block's row groups fold their partials into the block's row
  for (std::int64_t i = threadIdx.x; i < p.hidden; i += kThreads) {
    float sum = 0;
    for (int g = 0; g < groups; ++g) sum += shared_partials[g * p.hidden + i];
    partials[blockIdx.x * p.hidden + i] = sum;
  }
}

// Asynchronous 16-byte copies from global to shared memory (cp.async, sm_80 and later), committed
// in groups; wait_copies<n>() returns once at most n of this thread's groups are still in flight.
__device__ inline void copy_async(void* shared, const void* global) {
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(global) : "memory");
}
__device__ inline void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int Pending> __device__ inline void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

// Rows in flight to shared memory ahead of the one computed, for P vectors a thread: a stage holds
// one row of x and of dy (at most P·16 KiB), so that the stages of a block stay within 128 KiB.
template <int P> constexpr int kStages = P == 2 ? 3 : 2;

// Backward for rows of up to P·kThreads vectors: the block computes one row at a time, each thread
// the same P vectors of every row, while the block's next kStages−1 rows are copied into shared
// memory with cp.async. A thread copies and reads only its own vectors, so that the copies need no
// barrier; offset + w and the thread's dw sums stay in registers across rows; the row's m·x sum is
// the one barrier a row (its scratch alternates between two halves, so that a fast warp writing the
// next row's sum cannot overwrite one still being read). On an H100 it moves 4096 x 8192 bf16 at 84%
// of the calibrated bandwidth, where the row-group kernel reached 69%; with one vector a thread
// (rows of 4096 bf16) the row's barrier is most of a thread's work, and it reached 50% where the
// row-group kernel, several rows a block, reaches 60% (bench/results/rms_norm-h100.md).
// Its parameters are the row-group kernel's, so that one launch serves both.
template <class T, int N, Casting C, int P> __global__ void __launch_bounds__(kThreads)
    pipelined_backward_kernel(Problem problem, int /*width: the block's*/, const T* __restrict__ x,
                              const T* __restrict__ w, const T* __restrict__ dy, const void* __restrict__ rstd_in,
                              T* __restrict__ dx, float* __restrict__ partials, bool /*shared_dw: registers*/) {
  using V = Pack<T, N>;
  constexpr int kAhead = kStages<P> - 1;
  extern __shared__ __align__(16) unsigned char staged_rows[];  // kStages<P> × (x row, dy row)
  __shared__ float scratch[2][kThreads / 32];
  const Problem p = specialise<T, C>(problem);
  const int tid = static_cast<int>(threadIdx.x), vectors = static_cast<int>(p.hidden / N);
  const auto stage = [&](int s) { return reinterpret_cast<V*>(staged_rows) + s * 2 * vectors; };

  float weight[P][N], dw_sum[P][N];  // offset + w, and Σ dw terms, of this thread's columns
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int v = tid + i * kThreads;
    const V wk = v < vectors ? reinterpret_cast<const V*>(w)[v] : V{};
#pragma unroll
    for (int j = 0; j < N; ++j) weight[i][j] = to_float(wk.v[j]) + p.offset, dw_sum[i][j] = 0;
  }
  const std::int64_t step = gridDim.x;
  // Starts the copies of `row` into stage s; a group is committed for every call, a row or none,
  // so that wait_copies counts rows.
  const auto fetch = [&](std::int64_t row, int s) {
    if (row < p.tokens) {
      const V *xr = reinterpret_cast<const V*>(x + row * p.hidden),
              *dyr = reinterpret_cast<const V*>(dy + row * p.hidden);
      V *sx = stage(s), *sdy = sx + vectors;
#pragma unroll
      for (int i = 0; i < P; ++i)
        if (const int v = tid + i * kThreads; v < vectors) copy_async(sx + v, xr + v), copy_async(sdy + v, dyr + v);
    }
    commit_copies();
  };

  std::int64_t row = blockIdx.x;
#pragma unroll
  for (int s = 0; s < kAhead; ++s) fetch(row + s * step, s);
  float next_rstd = row < p.tokens ? saved_rstd<T, C>(rstd_in, row) : 0.0f;
  for (int s = 0, half = 0; row < p.tokens; row += step, s = s == kAhead ? 0 : s + 1, half ^= 1) {
    const float rstd = next_rstd;  // loaded a row ahead, as the rows are
    if (row + step < p.tokens) next_rstd = saved_rstd<T, C>(rstd_in, row + step);
    fetch(row + kAhead * step, s == 0 ? kAhead : s - 1);  // into the stage the previous row freed
    wait_copies<kAhead>();

    const V *sx = stage(s), *sdy = sx + vectors;
    V xs[P], dys[P];
    float dot = 0;
#pragma unroll
    for (int i = 0; i < P; ++i)
      if (const int v = tid + i * kThreads; v < vectors) {
        xs[i] = sx[v], dys[i] = sdy[v];
#pragma unroll
        for (int j = 0; j < N; ++j) dot += to_float(dys[i].v[j]) * weight[i][j] * to_float(xs[i].v[j]);
      }
    for (int offset = 16; offset > 0; offset >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
    if (tid % 32 == 0) scratch[half][tid / 32] = dot;
    __syncthreads();
    dot = 0;
#pragma unroll
    for (int k = 0; k < kThreads / 32; ++k) dot += scratch[half][k];

    const float c = p.c(rstd, dot);
    V* dxr = reinterpret_cast<V*>(dx + row * p.hidden);
#pragma unroll
    for (int i = 0; i < P; ++i)
      if (const int v = tid + i * kThreads; v < vectors) {
        V out;
#pragma unroll
        for (int j = 0; j < N; ++j) {
          const float xj = to_float(xs[i].v[j]), dyj = to_float(dys[i].v[j]);
          out.v[j] = from_float<T>(p.dx_sum(xj, dyj * weight[i][j], rstd, c));
          dw_sum[i][j] += p.dw_term(xj, dyj, rstd);
        }
        dxr[v] = out;
      }
  }
  wait_copies<0>();                                                           // the empty groups of the last rows
  float* part = partials + static_cast<std::int64_t>(blockIdx.x) * p.hidden;  // transposed, as dw_kernel reads it
#pragma unroll
  for (int i = 0; i < P; ++i)
    if (const int v = tid + i * kThreads; v < vectors)
#pragma unroll
      for (int j = 0; j < N; ++j) part[j * vectors + v] = dw_sum[i][j];
}

// dw = Σ partials, in the dtype: 32 partial columns a block, kDwSlices threads summing each.
template <class T, int N>
__global__ void dw_kernel(Problem problem, const float* __restrict__ partials, int parts, T* __restrict__ dw) {
  __shared__ float sums[kDwSlices][33];
  const Problem p = specialise<T, Casting::llama>(problem);  // to_dtype alone: the mode does not matter
  const int vectors = static_cast<int>(p.hidden / N);
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * 32 + threadIdx.x;
  float sum = 0;
  if (i < p.hidden)
#pragma unroll 4
    for (int part = static_cast<int>(threadIdx.y); part < parts; part += kDwSlices)
      sum += partials[part * p.hidden + i];
  sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || i >= p.hidden) return;
  float total = 0;
  for (int s = 0; s < kDwSlices; ++s) total += sums[s][threadIdx.x];
  dw[(i % vectors) * N + i / vectors] = from_float<T>(p.to_dtype(total));
}

// Calls launch(T{}, N, C) with the element type, the vector width (16 bytes, or 1 element when
// hidden is no multiple of it) and the casting mode of `p`, each as a compile-time constant.
template <class Launch> void dispatch(const Problem& p, Launch&& launch) {
  const auto by_casting = [&](auto zero, auto n) {
    using Mode = Casting;
    if (p.casting == Mode::llama) launch(zero, n, std::integral_constant<Mode, Mode::llama>{});
    else if (p.casting == Mode::gemma) launch(zero, n, std::integral_constant<Mode, Mode::gemma>{});
    else launch(zero, n, std::integral_constant<Mode, Mode::none>{});
  };
  const auto by_width = [&](auto zero) {
    constexpr int kVector = 16 / sizeof(zero);
    if (p.hidden % kVector == 0) by_casting(zero, std::integral_constant<int, kVector>{});
    else by_casting(zero, std::integral_constant<int, 1>{});
  };
  if (p.bf16) by_width(__nv_bfloat16{});
  else by_width(0.0f);
}

// The CUDA implementation's instance: the row layout, the device buffers (inputs generated on the
// device), the launches of each pass, and the check.
class CudaRmsNorm final : public Instance {
 public:
  explicit CudaRmsNorm(const Parameters& params) : p_(params) {
    const std::size_t n = elements(), h = static_cast<std::size_t>(p_.hidden), e = p_.element_size();
    const std::size_t vector = p_.hidden % (16 / e) == 0 ? 16 / e : 1;
    while (width_ < kThreads && static_cast<std::size_t>(width_ * kCached) * vector < h) width_ *= 2;
    // forward: blocks of 256 threads where rows are short (4 blocks fit a multiprocessor, against 2 of
    // 512: their phases overlap better), of one row group where they are long
    forward_threads_ = std::max(256, width_);
    const int forward_groups = forward_threads_ / width_, groups = kThreads / width_;
    forward_blocks_ = static_cast<unsigned>((p_.tokens + forward_groups - 1) / forward_groups);
    plan_backward(groups, vector);
    dispatch(p_, [&](auto zero, auto vector_width, auto mode) {
      const auto kernel =
          this->template backward_kernel_for<decltype(zero), decltype(vector_width)::value, decltype(mode)::value>();
      KS_CUDA(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes_)));
    });

    x_ = memory_.allocate_bytes(n * e, "x");
    dy_ = memory_.allocate_bytes(n * e, "dy");
    y_ = memory_.allocate_bytes(n * e, "y");
    dx_ = memory_.allocate_bytes(n * e, "dx");
    w_ = memory_.allocate_bytes(h * e, "w");
    dw_ = memory_.allocate_bytes(h * e, "dw");
    rstd_ = memory_.allocate_bytes(static_cast<std::size_t>(p_.tokens) * p_.rstd_size(), "rstd");
    partials_ = memory_.allocate<float>(static_cast<std::size_t>(parts_) * h, "dw partials");
    // The inputs as p_.input() gives them: rounding to bf16 twice is rounding it once.
    generate_symmetric(x_, p_.bf16, n, p_.seed, kX, stream_);
    generate_symmetric(dy_, p_.bf16, n, p_.seed, kDy, stream_);
    generate_symmetric(w_, p_.bf16, h, p_.seed, kW, stream_);
    stream_.synchronize();
  }

  BoundMode bind(const std::string& mode) override {
    if (mode == "backward") run("forward");  // backward reads the rstd forward saves
    return {[this, mode] { run(mode); }, [this, mode] { return run_and_check(mode); }};
  }
  void* stream() const override { return stream_.get(); }
  std::size_t device_bytes() const override { return memory_.total_bytes(); }

 private:
  // The passes of `mode`, enqueued on the instance's stream.
  void run(const std::string& mode) {
    if (mode != "backward") forward();
    if (mode != "forward") backward();
  }

  // Sets the outputs of `mode` to NaN (all bits set), runs it, and compares the device's inputs and
  // outputs (check() in rms_norm.h) with the float64 reference and with the CPU implementation run on
  // the host's inputs.
  CheckResult run_and_check(const std::string& mode) {
    const std::size_t n = elements(), h = static_cast<std::size_t>(p_.hidden), e = p_.element_size();
    const std::size_t rstd_count = static_cast<std::size_t>(p_.tokens);
    const bool forward_pass = mode != "backward", backward_pass = mode != "forward";
    if (forward_pass) {
      KS_CUDA(cudaMemsetAsync(y_, 0xFF, n * e, stream_));
      KS_CUDA(cudaMemsetAsync(rstd_, 0xFF, rstd_count * p_.rstd_size(), stream_));
    }
    if (backward_pass) {
      KS_CUDA(cudaMemsetAsync(dx_, 0xFF, n * e, stream_));
      KS_CUDA(cudaMemsetAsync(dw_, 0xFF, h * e, stream_));
    }
    run(mode);
    stream_.synchronize();

    Tensors cpu = make_inputs(p_);
    rms_norm::run(p_, cpu, backward_pass ? "full" : "forward");  // backward reads forward's rstd
    const bool bf16 = p_.bf16, rstd_bf16 = p_.rstd_size() == 2;
    Tensors got{
        download_floats(x_, n, bf16), download_floats(w_, h, bf16), download_floats(dy_, n, bf16), {}, {}, {}, {}};
    if (forward_pass) got.y = download_floats(y_, n, bf16), got.rstd = download_floats(rstd_, rstd_count, rstd_bf16);
    if (backward_pass) got.dx = download_floats(dx_, n, bf16), got.dw = download_floats(dw_, h, bf16);
    return check(p_, mode, got, &cpu);
  }

  std::size_t elements() const { return static_cast<std::size_t>(p_.tokens * p_.hidden); }

  void forward() {
    dispatch(p_, [&](auto zero, auto vector_width, auto mode) {
      using T = decltype(zero);
      constexpr int kN = decltype(vector_width)::value;
      forward_kernel<T, kN, decltype(mode)::value><<<forward_blocks_, forward_threads_, 0, stream_>>>(
          p_, width_, static_cast<const T*>(x_), static_cast<const T*>(w_), static_cast<T*>(y_), rstd_);
    });
    KS_CUDA_LAUNCHED();
  }

  // Backward's kernel, its blocks and its shared memory: the pipelined kernel where a row is more than
  // kThreads and at most 4·kThreads 16-byte vectors (two or four a thread) and its stages fit a block, else the
  // row-group kernel, with its dw partials in shared memory where they fit a block.
  void plan_backward(int groups, std::size_t vector) {
    const std::size_t h = static_cast<std::size_t>(p_.hidden), vectors = h / vector;
    const auto shared_limit = static_cast<std::size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    if (vector > 1)
      for (const int per_thread : {2, 4})
        if (vectors > kThreads && vectors <= static_cast<std::size_t>(per_thread * kThreads)) {
          const int stages = per_thread == 2 ? kStages<2> : kStages<4>;
          shared_bytes_ = static_cast<std::size_t>(stages) * 2 * h * p_.element_size();
          if (shared_bytes_ <= shared_limit) vectors_per_thread_ = per_thread;
          break;
        }
    if (vectors_per_thread_ > 0) {
      backward_blocks_ = static_cast<int>(std::min<std::int64_t>(sm_count(), p_.tokens));
      parts_ = backward_blocks_;
      return;
    }
    backward_blocks_ = static_cast<int>(std::min<std::int64_t>(sm_count(), (p_.tokens + groups - 1) / groups));
    shared_bytes_ = static_cast<std::size_t>(groups) * h * sizeof(float);
    shared_dw_ = shared_bytes_ + sizeof(float) * kThreads / 32 <= shared_limit;
    if (!shared_dw_) shared_bytes_ = 0;
    parts_ = shared_dw_ ? backward_blocks_ : backward_blocks_ * groups;
  }

  // Backward's kernel for this point, as plan_backward chose it (the two take the same parameters).
  template <class T, int N, Casting C> auto backward_kernel_for() const {
    auto kernel = backward_kernel<T, N, C>;
    if constexpr (N > 1) {
      if (vectors_per_thread_ == 2) kernel = pipelined_backward_kernel<T, N, C, 2>;
      if (vectors_per_thread_ == 4) kernel = pipelined_backward_kernel<T, N, C, 4>;
    }
    return kernel;
  }

  void backward() {
    dispatch(p_, [&](auto zero, auto vector_width, auto mode) {
      using T = decltype(zero);
      constexpr int kN = decltype(vector_width)::value;
      const auto kernel = this->template backward_kernel_for<T, kN, decltype(mode)::value>();
      kernel<<<backward_blocks_, kThreads, shared_bytes_, stream_>>>(
          p_, width_, static_cast<const T*>(x_), static_cast<const T*>(w_), static_cast<const T*>(dy_), rstd_,
          static_cast<T*>(dx_), partials_, shared_dw_);
      KS_CUDA_LAUNCHED();
      const auto column_blocks = static_cast<unsigned>((p_.hidden + 31) / 32);
      dw_kernel<T, kN><<<column_blocks, dim3(32, kDwSlices), 0, stream_>>>(p_, partials_, parts_, static_cast<T*>(dw_));
    });
    KS_CUDA_LAUNCHED();
  }

  DeviceMemory memory_;  // before the stream: freed after it drains
  Stream stream_;
  Problem p_;
  int width_ = 32, forward_threads_ = 256;  // threads a row; threads of a forward block
  int backward_blocks_ = 1, parts_ = 1;     // blocks of backward; dw partial rows
  int vectors_per_thread_ = 0;              // of the pipelined backward; 0: the row-group kernel
  unsigned forward_blocks_ = 1;
  std::size_t shared_bytes_ = 0;
  bool shared_dw_ = true;
  void *x_ = nullptr, *w_ = nullptr, *dy_ = nullptr, *y_ = nullptr, *dx_ = nullptr, *dw_ = nullptr, *rstd_ = nullptr;
  float* partials_ = nullptr;
};

}  // namespace

KS_IMPLEMENTATION(rms_norm, cuda, cuda, "a row group per row, 16-byte vectors, dw from per-SM partial sums") {
  return std::make_unique<CudaRmsNorm>(params);
}

}  // namespace ks::rms_norm
