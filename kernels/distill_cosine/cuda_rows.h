#pragma once
// Device math of one row of logits, shared by the fused row kernels: the online statistics (max and
// sum of exp for logsumexp, ‖s‖², ‖t‖², s·t), their combination across threads and blocks, and the
// per-row terms of the loss and of dL/ds derived from them (bench/results/distill_cosine-notes.md
// derives the formulas; reference.cpp computes the same thing step by step in double).
#include <cmath>
#include <cstdint>

#include "kernels/common/bf16.h"

namespace ks::distill::cuda {

// Plain data (no initialisers) so that it can live in shared memory; empty_stats() starts a row.
struct RowStats {
  float max;      // of s
  float sum_exp;  // Σ exp(s − max)
  float ss, tt, st;
};

__device__ inline RowStats empty_stats() { return RowStats{-INFINITY, 0.0f, 0.0f, 0.0f, 0.0f}; }

__device__ inline RowStats combine(const RowStats& a, const RowStats& b) {
  RowStats r;
  r.max = fmaxf(a.max, b.max);
  const float ea = a.max == -INFINITY ? 0.0f : a.sum_exp * __expf(a.max - r.max);
  const float eb = b.max == -INFINITY ? 0.0f : b.sum_exp * __expf(b.max - r.max);
  r.sum_exp = ea + eb;
  r.ss = a.ss + b.ss;
  r.tt = a.tt + b.tt;
  r.st = a.st + b.st;
  return r;
}

__device__ inline RowStats shuffle_down(const RowStats& a, int offset) {
  RowStats r;
  r.max = __shfl_down_sync(0xffffffffu, a.max, offset);
  r.sum_exp = __shfl_down_sync(0xffffffffu, a.sum_exp, offset);
  r.ss = __shfl_down_sync(0xffffffffu, a.ss, offset);
  r.tt = __shfl_down_sync(0xffffffffu, a.tt, offset);
  r.st = __shfl_down_sync(0xffffffffu, a.st, offset);
  return r;
}

// The block's combined statistics, valid in thread 0. blockDim.x is a multiple of 32, at most 1024.
__device__ inline RowStats block_combine(RowStats mine) {
  __shared__ RowStats warps[32];
  for (int offset = 16; offset > 0; offset /= 2) mine = combine(mine, shuffle_down(mine, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warps[warp] = mine;
  __syncthreads();
  if (warp == 0) {
    const int count = blockDim.x / 32;
    mine = lane < count ? warps[lane] : empty_stats();
    for (int offset = 16; offset > 0; offset /= 2) mine = combine(mine, shuffle_down(mine, offset));
  }
  return mine;
}

template <typename T, int N> struct alignas(sizeof(T) * N) Pack { T v[N]; };

// One 16-byte load or store per pack. Copying a Pack of bf16 as a struct compiles to one 2-byte load
// per element (ld.global.u16), which made the row kernels bound by their load instructions rather
// than by memory (ncu: L1 hit rate 87 %, one miss then seven hits per 16-byte sector).
template <typename T, int N> __device__ inline Pack<T, N> load_pack(const Pack<T, N>* from) {
  if constexpr (sizeof(Pack<T, N>) == sizeof(uint4)) {
    const uint4 bits = *reinterpret_cast<const uint4*>(from);
    Pack<T, N> pack;
    memcpy(&pack, &bits, sizeof bits);
    return pack;
  } else {
    return *from;
  }
}

template <typename T, int N> __device__ inline void store_pack(Pack<T, N>* to, const Pack<T, N>& pack) {
  if constexpr (sizeof(Pack<T, N>) == sizeof(uint4)) {
    uint4 bits;
    memcpy(&bits, &pack, sizeof bits);
    *reinterpret_cast<uint4*>(to) = bits;
  } else {
    *to = pack;
  }
}

constexpr float kLog2e = 1.4426950408889634f;

__device__ inline float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// exp(s − max) as one FMA and one ex2, given max_log2e = max·log2(e) (computed once per row): the
// row kernels' most frequent operation, which __expf(s − max) makes three instructions.
__device__ inline float exp_shifted(float s, float max_log2e) { return exp2_approx(fmaf(s, kLog2e, -max_log2e)); }

// Adds a pack of student (s) and teacher (t) logits to the running statistics: one rescale of the
// sum of exp per pack, not per element.
template <typename T, int N>
__device__ inline void accumulate(RowStats& stats, const Pack<T, N>& s, const Pack<T, N>& t) {
  float sf[N], tf[N];
  float pack_max = -INFINITY;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    sf[i] = to_float(s.v[i]);
    tf[i] = to_float(t.v[i]);
    pack_max = fmaxf(pack_max, sf[i]);
  }
  if (pack_max > stats.max) {
    stats.sum_exp = stats.max == -INFINITY ? 0.0f : stats.sum_exp * exp_shifted(stats.max, pack_max * kLog2e);
    stats.max = pack_max;
  }
  const float max_log2e = stats.max * kLog2e;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    stats.sum_exp += exp_shifted(sf[i], max_log2e);
    stats.ss += sf[i] * sf[i];
    stats.tt += tf[i] * tf[i];
    stats.st += sf[i] * tf[i];
  }
}

// The loss's constants: w_hard/N, w_soft·β/N, the temperature and the ignored target value.
struct LossScales {
  double hard = 0, soft = 0, temperature = 1;
  std::int64_t ignore_index = -100;
};

// What a row contributes: its loss, and dL/ds_j = softmax_scale·exp(s_j − max) + alpha·s_j +
// gamma·t_j + (j == target ? onehot : 0).
struct RowTerms {
  double loss;
  float max_log2e, softmax_scale, alpha, gamma, onehot;
};

// cos(normalize(s/T), normalize(t/T)) with F.normalize's eps 1e-12 and F.cosine_similarity's 1e-8,
// and its gradient through both steps as autograd takes it, reduced to a combination of s and t:
// d cos/da = q·t + p·s (a, b the normalised rows), then through the normalisation of u = s/T.
__device__ inline RowTerms row_terms(const RowStats& stats, float s_target, bool labelled, const LossScales& k) {
  const double temp = k.temperature;
  const double ss = stats.ss, tt = stats.tt, st = stats.st;
  const double nu = sqrt(ss) / temp, nv = sqrt(tt) / temp;  // ‖u‖, ‖w‖
  const double du = fmax(nu, 1e-12), dv = fmax(nv, 1e-12);  // F.normalize's divisors
  const double na = nu / du, nb = nv / dv;                  // ‖a‖, ‖b‖
  const double da = fmax(na, 1e-8), db = fmax(nb, 1e-8);    // cosine_similarity's divisors
  const double cosine = (st / (temp * temp)) / (du * dv * da * db);
  const double q = 1.0 / (da * db * temp * dv);  // d cos/da = q·t + p·s
  const double p = na > 0 ? -cosine / (da * na * temp * du) : 0.0;
  double cs, ct;     // d cos/du = cs·s + ct·t
  if (nu > 1e-12) {  // the projection removes the s part of d cos/da
    ct = q / nu;
    cs = -q * st / (ss * nu);
  } else {
    ct = q / 1e-12;
    cs = p / 1e-12;
  }
  RowTerms terms{};
  terms.max_log2e = stats.max * kLog2e;
  terms.alpha = static_cast<float>(-k.soft * cs / temp);
  terms.gamma = static_cast<float>(-k.soft * ct / temp);
  terms.loss = k.soft * (1.0 - cosine);
  if (labelled) {
    const double lse = static_cast<double>(stats.max) + log(static_cast<double>(stats.sum_exp));
    terms.loss += k.hard * (lse - static_cast<double>(s_target));
    terms.softmax_scale = static_cast<float>(k.hard / stats.sum_exp);
    terms.onehot = static_cast<float>(-k.hard);
  }
  return terms;
}

__device__ inline float logit_gradient(const RowTerms& terms, float s, float t) {
  return terms.softmax_scale * exp_shifted(s, terms.max_log2e) + terms.alpha * s + terms.gamma * t;
}

// dL/ds for one pack of a row; target_lane is where the row's target sits in this pack, or −1 (one
// comparison per pack rather than a 64-bit index comparison per element).
template <typename T, int N> __device__ inline Pack<T, N> gradient_pack(const RowTerms& terms, const Pack<T, N>& s,
                                                                        const Pack<T, N>& t, int target_lane) {
  float g[N];
#pragma unroll
  for (int e = 0; e < N; ++e) g[e] = logit_gradient(terms, to_float(s.v[e]), to_float(t.v[e]));
  if (target_lane >= 0) {
#pragma unroll
    for (int e = 0; e < N; ++e)
      if (e == target_lane) g[e] += terms.onehot;
  }
  Pack<T, N> out;
#pragma unroll
  for (int e = 0; e < N; ++e) out.v[e] = from_float<T>(g[e]);
  return out;
}

// The lane of `target` in pack `pack` (packs of N from `first`), or −1 when the pack does not hold it.
template <int N> __device__ inline int target_lane(std::int64_t pack, std::int64_t first, std::int64_t target) {
  const std::int64_t offset = target - first - pack * N;
  return offset >= 0 && offset < N ? static_cast<int>(offset) : -1;
}

}  // namespace ks::distill::cuda
