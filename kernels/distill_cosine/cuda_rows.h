#pragma once
// Device math of one row of logits, shared by the fused row kernels: the online statistics (max and
// sum of exp for logsumexp, ‖s‖², ‖t‖², s·t), their combination across threads and blocks, and the
// per-row terms of the loss and of dL/ds derived from them (bench/results/distill_cosine_notes.md
// derives the formulas; reference.cpp computes the same thing step by step in double).
#include <cmath>
#include <cstdint>

#include <cuda_bf16.h>

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

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ inline T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) { return x; }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

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
    stats.sum_exp = stats.max == -INFINITY ? 0.0f : stats.sum_exp * __expf(stats.max - pack_max);
    stats.max = pack_max;
  }
#pragma unroll
  for (int i = 0; i < N; ++i) {
    stats.sum_exp += __expf(sf[i] - stats.max);
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
  float max, softmax_scale, alpha, gamma, onehot;
};

// cos(normalize(s/T), normalize(t/T)) with F.normalize's eps 1e-12 and F.cosine_similarity's 1e-8,
// and its gradient through both steps as autograd takes it, reduced to a combination of s and t:
// d cos/da = q·t + p·s (a, b the normalised rows), then through the normalisation of u = s/T.
__device__ inline RowTerms row_terms(const RowStats& stats, float s_target, bool labelled, const LossScales& k) {
  const double temp = k.temperature;
  const double ss = stats.ss, tt = stats.tt, st = stats.st;
  const double nu = sqrt(ss) / temp, nv = sqrt(tt) / temp;              // ‖u‖, ‖w‖
  const double du = fmax(nu, 1e-12), dv = fmax(nv, 1e-12);               // F.normalize's divisors
  const double na = nu / du, nb = nv / dv;                               // ‖a‖, ‖b‖
  const double da = fmax(na, 1e-8), db = fmax(nb, 1e-8);                 // cosine_similarity's divisors
  const double cosine = (st / (temp * temp)) / (du * dv * da * db);
  const double q = 1.0 / (da * db * temp * dv);                          // d cos/da = q·t + p·s
  const double p = na > 0 ? -cosine / (da * na * temp * du) : 0.0;
  double cs, ct;  // d cos/du = cs·s + ct·t
  if (nu > 1e-12) {  // the projection removes the s part of d cos/da
    ct = q / nu;
    cs = -q * st / (ss * nu);
  } else {
    ct = q / 1e-12;
    cs = p / 1e-12;
  }
  RowTerms terms{};
  terms.max = stats.max;
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
  return terms.softmax_scale * __expf(s - terms.max) + terms.alpha * s + terms.gamma * t;
}

}  // namespace ks::distill::cuda
