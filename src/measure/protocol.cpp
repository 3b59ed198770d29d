#include "measure/protocol.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "measure/cold.h"
#include "measure/do_bench.h"
#include "measure/graph.h"

namespace ks {
namespace {

constexpr std::int64_t kGpuFlushBytes = 256LL << 20;  // Triton's 256 MB L2 flush buffer
constexpr std::int64_t kCpuMinRepeat = 10;

// The graph protocol flushes only when asked (Triton's do_bench_cudagraph has no flush). Triton's
// do_bench flushes 256 MiB on a GPU; NVBench's cold measurement zeroes a buffer the size of the
// device's L2, which a point recorded without a worker (never timed) cannot ask for: it cites
// Triton's size. On the CPU: the last-level cache.
std::int64_t default_flush_bytes(const ProtocolSpec& spec, Backend backend, std::int64_t gpu_l2_bytes) {
  if (spec.name == "graph") return 0;
  if (backend != Backend::cuda) return cpu_last_level_cache_bytes();
  if (spec.name == "cold" && gpu_l2_bytes > 0) return gpu_l2_bytes;
  return kGpuFlushBytes;
}

Json common_fields(const Protocol& protocol) {
  return Json{{"name", protocol.name}, {"timer", protocol.timer}, {"flush_bytes", protocol.flush_bytes}};
}

void add_statistics(Json& json, const Protocol& protocol) {
  json["repetitions"] = protocol.repetitions;
  json["quantiles"] = protocol.quantiles;
  json["quantile_method"] = protocol.quantile_method;
  json["primaryStatistic"] = protocol.primary_statistic;
}

}  // namespace

Protocol resolve_protocol(const ProtocolSpec& spec, Backend backend, std::int64_t gpu_l2_bytes) {
  if (spec.name != "do_bench" && spec.name != "cold" && spec.name != "graph")
    throw std::invalid_argument(fmt::format("protocol '{}' is not known (do_bench, cold or graph)", spec.name));
  Protocol protocol;
  protocol.name = spec.name;
  protocol.timer = backend == Backend::cuda ? "cuda_events" : "steady_clock";
  protocol.warmup_ms = spec.warmup_ms;
  protocol.rep_ms = spec.rep_ms;
  // Triton takes what rep_ms allows, down to one repetition; the CPU path keeps a few more, so that a
  // point whose flush fills most of rep_ms still has a spread worth its quantiles (never more than
  // max_repeat allows: the protocol document says what was done).
  protocol.min_repeat =
      spec.min_repeat.value_or(backend == Backend::cuda ? 1 : std::min(kCpuMinRepeat, spec.max_repeat));
  protocol.max_repeat = spec.max_repeat;
  protocol.flush_bytes = spec.flush_bytes.value_or(default_flush_bytes(spec, backend, gpu_l2_bytes));
  protocol.quantiles = spec.quantiles;
  protocol.repetitions = spec.repetitions;
  protocol.cold = spec.cold;
  protocol.replays = spec.replays;
  // Only a GPU has an SM clock to read; the document says what was done.
  protocol.sm_clock_per_sample = backend == Backend::cuda && (spec.name == "cold" || spec.sm_clock_per_sample);
  protocol.energy = backend == Backend::cuda && spec.energy;
  return protocol;
}

Json protocol_to_json(const Protocol& protocol) {
  Json json = common_fields(protocol);
  if (protocol.name == "cold") {
    json.update({{"max_noise", protocol.cold.max_noise},
                 {"noise_statistic", "relative standard deviation"},
                 {"min_samples", protocol.cold.min_samples},
                 {"min_time_s", protocol.cold.min_time_s},
                 {"timeout_s", protocol.cold.timeout_s},
                 {"throttle_threshold", protocol.cold.throttle_threshold},
                 {"throttle_pause_s", protocol.cold.throttle_pause_s},
                 {"hold_stream", protocol.timer == "cuda_events"}});
  } else if (protocol.name == "graph") {
    json.update({{"rep_ms", protocol.rep_ms},
                 {"max_repeat", protocol.max_repeat},
                 {"replays", protocol.replays},
                 {"sm_clock_per_sample", protocol.sm_clock_per_sample}});
  } else {
    json.update({{"warmup_ms", protocol.warmup_ms},
                 {"rep_ms", protocol.rep_ms},
                 {"min_repeat", protocol.min_repeat},
                 {"max_repeat", protocol.max_repeat},
                 {"sm_clock_per_sample", protocol.sm_clock_per_sample}});
  }
  add_statistics(json, protocol);
  // Only where asked: the energy window runs after the timed repetitions and changes none of their
  // figures, and the protocols of sweeps that do not ask keep their digests.
  if (protocol.energy) json["energy"] = true;
  return json;
}

std::unique_ptr<BenchTimer> make_timer(void* stream, const Protocol& protocol) {
  if (protocol.timer == "steady_clock") return make_steady_clock_timer(protocol.flush_bytes);
  if (protocol.timer == "cuda_events") {
#ifdef KERNELSWEEP_HAVE_CUDA
    return make_cuda_event_timer(stream, protocol.flush_bytes);
#else
    (void)stream;
    throw std::runtime_error(
        "timer 'cuda_events' needs CUDA, and this kernelsweep was built without it "
        "(configure with -DKERNELSWEEP_CUDA=ON)");
#endif
  }
  throw std::invalid_argument(fmt::format("unknown timer '{}' (steady_clock or cuda_events)", protocol.timer));
}

void reserve_timer(const Protocol& protocol) { make_timer(nullptr, protocol); }

Timing time_point(const BoundMode& mode, void* stream, const Protocol& protocol, const TimedPhase& phase) {
  const auto timer = make_timer(stream, protocol);
  return time_point(mode, *timer, protocol, phase);
}

Timing time_point(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase) {
  if (protocol.name == "cold") return cold(mode, timer, protocol, phase);
  if (protocol.name == "graph") return graph(mode, timer, protocol, phase);
  return do_bench(mode, timer, protocol, phase);
}

}  // namespace ks
