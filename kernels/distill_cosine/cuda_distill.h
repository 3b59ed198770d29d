#pragma once
// The CUDA implementations of distill_cosine_loss as the benchmark and the GPU tests see them, with
// the options a sweep does not reach (row kernel, schedule, teacher sub-chunk) and the instances that
// time parts of a pass. Plain C++ (no CUDA types); the functions are defined in builds with CUDA only.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/distill_cosine/distill_cosine.h"

namespace ks::distill {

// An option's name in a table of {value, name}, and back: "?" for a value not in it; named() throws
// std::invalid_argument on an unknown name, listing the known ones.
template <class Option, std::size_t N>
const char* name_of(Option option, const std::pair<Option, const char*> (&names)[N]) {
  for (const auto& [value, name] : names)
    if (value == option) return name;
  return "?";
}
template <class Option, std::size_t N>
Option named(const std::string& name, const std::pair<Option, const char*> (&names)[N], const char* what) {
  std::string known;
  for (const auto& [value, value_name] : names) {
    if (name == value_name) return value;
    known += (known.empty() ? "" : ", ") + std::string(value_name);
  }
  throw std::invalid_argument("distill_cosine_loss: unknown " + std::string(what) + " '" + name + "' (" + known + ")");
}

// How the fused implementation reads a row of logits for its statistics and its gradient.
enum class RowKernel {
  automatic,  // two_pass: inside a pass no H200 run told it from cluster, though cluster alone is 5 %
              // faster; it runs on any GPU (bench/results/distill_cosine-notes.md)
  two_pass,   // one block per row, reading s and t twice from memory (any GPU)
  cluster,    // a cluster of blocks per row keeps the row in shared memory: one read (sm_90)
};
inline constexpr std::pair<RowKernel, const char*> kRowKernelNames[] = {
    {RowKernel::automatic, "auto"}, {RowKernel::two_pass, "two-pass"}, {RowKernel::cluster, "cluster"}};
inline const char* to_string(RowKernel kernel) { return name_of(kernel, kRowKernelNames); }
// Throws on an unknown name.
inline RowKernel row_kernel_from_string(const std::string& name) { return named(name, kRowKernelNames, "row kernel"); }

// How the fused implementation orders a chunk's work. Per chunk it computes the student logits of
// the whole chunk, then the teacher logits in sub-chunks of `teacher_rows` tokens, each followed by
// the row kernel on those rows, then the two gradient products.
enum class Schedule {
  automatic,  // the fastest measured on an H200 (fused_plan says which)
  serial,     // everything on stream(), one teacher buffer
  overlap,    // two teacher buffers; the row kernel of sub-chunk j runs on a second, higher-priority
              // stream while the teacher product of sub-chunk j+1 runs on stream(); joined back
              // into stream() before the gradient products and before run() returns
};
inline constexpr std::pair<Schedule, const char*> kScheduleNames[] = {
    {Schedule::automatic, "auto"}, {Schedule::serial, "serial"}, {Schedule::overlap, "overlap"}};
inline const char* to_string(Schedule schedule) { return name_of(schedule, kScheduleNames); }
// Throws on an unknown name.
inline Schedule schedule_from_string(const std::string& name) { return named(name, kScheduleNames, "schedule"); }

struct FusedOptions {
  RowKernel row_kernel = RowKernel::automatic;
  Schedule schedule = Schedule::automatic;
  std::int64_t teacher_rows = 0;  // tokens per teacher sub-chunk; 0: automatic (fused_plan)
};

// The schedule and teacher sub-chunk the fused implementation uses for `p` and `options` (resolves
// the automatic choices).
struct FusedPlan {
  std::int64_t chunk = 0;         // tokens per chunk (student logits, gradient products)
  std::int64_t teacher_rows = 0;  // tokens per teacher sub-chunk, at most chunk
  Schedule schedule = Schedule::serial;
  int teacher_buffers() const { return schedule == Schedule::overlap ? 2 : 1; }
};
// The automatic choices are the fastest measured on an H200 that hold at most 3.0 GB at 1024 tokens
// and 3.5 GB at 8192 (bench/results/distill_cosine-notes.md): chunk 2048, serial. The overlap
// schedule measured no faster (its row kernel cannot share an SM with cuBLASLt's products, so the
// two only take turns), and is kept as an option.
inline FusedPlan fused_plan(const Problem& p, const FusedOptions& options) {
  FusedPlan plan;
  plan.chunk = std::min<std::int64_t>(p.chunk_size > 0 ? p.chunk_size : 2048, p.tokens);
  plan.schedule = options.schedule == Schedule::automatic ? Schedule::serial : options.schedule;
  // With two teacher buffers of half a chunk, the logits take the memory of one serial chunk.
  const std::int64_t automatic_rows =
      plan.schedule == Schedule::overlap ? std::max<std::int64_t>((plan.chunk + 1) / 2, 1) : plan.chunk;
  plan.teacher_rows = std::min(options.teacher_rows > 0 ? options.teacher_rows : automatic_rows, plan.chunk);
  return plan;
}

// The implementations `fused` (with `options`) and `naive`, as a sweep gets them from the registry.
std::unique_ptr<Instance> make_fused_instance(const Problem& p, const FusedOptions& options = {});
std::unique_ptr<Instance> make_naive_instance(const Problem& p);

// The floor (implementation gemm_floor): the matrix products of a pass, unchunked, with cuBLASLt on
// the same inputs and dtypes as the fused implementation: the logits s and t, and for forward and
// full the gradients dXs and dWs too, back to back. Backward has none (binding it throws); its check
// compares nothing.
std::unique_ptr<Instance> make_gemm_floor_instance(const Problem& p);

// The fused implementation's row kernel alone (the part of a pass that is not a product), for
// bench/distill_cosine: bound to any mode, it applies the row kernel with gradients to the logits of
// one teacher sub-chunk (fused_plan(p, options).teacher_rows rows) in place, as a pass does (the
// values become dL/ds, which changes nothing its time depends on); its check compares nothing.
std::unique_ptr<Instance> make_row_pass_instance(const Problem& p, const FusedOptions& options);

// The inputs as the device generated them, copied back (bf16 values held as float): the GPU tests
// compare them bit for bit with make_inputs(). `instance` must come from make_fused_instance or
// make_naive_instance.
Inputs download_inputs(Instance& instance);

}  // namespace ks::distill
