#include "cluster/worker.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#ifdef KERNELSWEEP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "cluster/nccl_member.h"
#include "cluster/worker_messages.h"
#include "common/canonical_json.h"
#include "common/clock.h"
#include "env/environment.h"
#include "measure/device_memory.h"
#include "measure/do_bench.h"
#include "measure/energy.h"
#include "measure/gpu_state.h"
#include "measure/protocol.h"
#include "measure/timer.h"
#include "plugins/plugins.h"
#include "plugins/requested.h"

namespace ks {
namespace {

// Makes `ordinal` the current device of this process. Throws on failure; a no-op in a build without CUDA.
void bind_gpu(int ordinal) {
#ifdef KERNELSWEEP_HAVE_CUDA
  if (const cudaError_t e = cudaSetDevice(ordinal); e != cudaSuccess)
    throw std::runtime_error("cudaSetDevice(" + std::to_string(ordinal) + ") failed: " + cudaGetErrorString(e));
  cudaFree(nullptr);  // create the context now, outside any timed region
#else
  (void)ordinal;
#endif
}

// The instance of the last shape, kept while the next request has the same shape (its other modes),
// with the device memory measured from before it was made.
class InstanceCache {
 public:
  Instance& get(const KernelSpec& kernel, const Point& point, bool on_gpu) {
    const std::string key = point.shape_key();
    if (!instance_ || key != key_) {
      drop();  // free the old shape's memory before the new one allocates
      memory_ = DeviceMemoryPeak();
      if (on_gpu) memory_.start();
      instance_ = kernel.instantiate(point.implementation, point.params);
      key_ = key;
    }
    return *instance_;
  }
  void drop() {
    instance_.reset();
    key_.clear();
  }
  DeviceMemoryPeak& memory() { return memory_; }

 private:
  std::unique_ptr<Instance> instance_;
  std::string key_;
  DeviceMemoryPeak memory_;
};

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What the worker reads around a point's timed repetitions on a GPU: the GPU's state into the
// record, and the energy counter and wall clock into the window, whose calls the protocol counts.
struct TimedReadings {
  EnergyWindow window;
  double started_s = 0;

  TimedPhase phase(const GpuStateReader& gpu, RunRecord& record) {
    return {[this, &gpu, &record] {
              record.gpu_start = gpu.read();
              window.start_mj = gpu.total_energy_mj();
              started_s = steady_seconds();
            },
            [this, &gpu, &record] {
              window.seconds = steady_seconds() - started_s;
              window.end_mj = gpu.total_energy_mj();
              record.gpu_end = gpu.read();
            }};
  }
};

// The point's energy per call (measure/energy.h): its energy window, where one is run, has the
// point's calls back to back on its stream, timed by the point's median.
EnergyFigure energy_of_point(const BoundMode& mode, void* stream, const Protocol& protocol, const GpuStateReader& gpu,
                             const EnergyWindow& timed, double median_ns) {
  EnergyWindow timed_calls = timed;
  timed_calls.calls_only = protocol.flush_bytes == 0 && protocol.name != "cold";
  return point_energy(timed_calls, protocol.energy, [&] {
    const auto timer = make_timer(stream, protocol);
    const EnergyProbe probe{mode.run, [&timer] { timer->synchronize(); }, [&gpu] { return gpu.total_energy_mj(); },
                            steady_seconds};
    return run_energy_window(probe, median_ns / 1e9);
  });
}

class Worker {
 public:
  Worker(const WorkerArguments& args, const Registry& registry)
      : channel_(args.in_fd, args.out_fd), registry_(registry), local_rank_(args.local_rank) {}

  int serve() {
    if (!channel_.send(hello().dump())) return 0;
    std::string text;
    while (channel_.receive(text, std::chrono::microseconds(-1)) == ReadOutcome::message) {
      // A measure request from a rank of this executable comes as bytes, and is answered as bytes.
      const bool as_bytes = is_bytes_message(text);
      const Json message = as_bytes ? Json() : Json::parse(text);
      const Json type = as_bytes ? Json("measure") : message.at("type");
      if (type == "stop") break;
      if (type == "release") {  // another worker of the rank takes the GPU for a while
        cache_.drop();
        continue;
      }
      if (type == "nccl_id") {
        if (!channel_.send(new_nccl_id().dump())) break;
        continue;
      }
      const MeasureResult result = measure(as_bytes ? request_from_bytes(text, protocols_) : decode_request(message));
      if (!channel_.send(as_bytes ? encode_bytes(result) : encode(result)) || result.worker_exits) break;
    }
    return 0;
  }

 private:
  Json hello() {
    gpu_count_ = visible_gpu_count();
    GpuInfo gpu;
    std::string problem;
    if (gpu_count_ > 0) {
      // One GPU per rank: the local rank modulo the visible GPUs; where CUDA_VISIBLE_DEVICES leaves one
      // GPU visible (Slurm's --gpu-bind), that one.
      const int ordinal = local_rank_ % gpu_count_;
      try {
        gpu = read_gpu_info(ordinal);
        gpu_uuid_ = gpu.uuid;
        unbound_ordinal_ = ordinal;
      } catch (const std::exception& e) {
        problem = e.what();
        gpu_count_ = 0;
      }
    }
    return hello_message(gpu_count_, gpu, problem);
  }

  MeasureResult measure(const MeasureRequest& request) {
    MeasureResult result;
    RunRecord& record = result.record;
    record.started_at = iso_utc_now();
    const Point& point = request.point;
    const KernelSpec* kernel = registry_.find(point.kernel);
    const ImplementationSpec* implementation = kernel ? kernel->implementation(point.implementation) : nullptr;
    if (!implementation) {
      record.status = "error";
      record.message = "worker does not know " + point.kernel + "/" + point.implementation;
    } else if (implementation->backend == Backend::cuda && gpu_count_ == 0) {
      record.status = "skipped";
      record.message = "no GPU visible to this worker";
    } else if (bound_for(*implementation, result)) {
      if (request.gang) {
        cache_.drop();  // the collective's buffers have the device memory to themselves
        return nccl_.measure(request);
      }
      time_and_check(*kernel, *implementation, request, result);
    }
    record.ended_at = iso_utc_now();
    return result;
  }

  void time_and_check(const KernelSpec& kernel, const ImplementationSpec& implementation, const MeasureRequest& request,
                      MeasureResult& result) {
    const Point& point = request.point;
    RunRecord& record = result.record;
    const bool on_gpu = implementation.backend == Backend::cuda;
    try {
      const Protocol protocol =
          resolve_protocol(request.protocol, implementation.backend, on_gpu ? l2_cache_bytes() : 0);
      result.protocol = protocol_to_json(protocol);
      if (on_gpu) reserve_timer(protocol);  // before the memory baseline: the flush buffer is not the point's
      Instance& instance = cache_.get(kernel, point, on_gpu);
      DeviceMemoryPeak& memory = cache_.memory();
      memory.reset_peak();  // this mode's peak: from the instance as set up (or as the last mode left it)
      memory.sample();
      const BoundMode mode = kernel.bind(instance, point.mode);
      memory.sample();
      const GpuStateReader* gpu_state = on_gpu ? gpu_state_reader() : nullptr;
      TimedReadings readings;
      const TimedPhase phase = gpu_state ? readings.phase(*gpu_state, record) : TimedPhase{};
      Timing timing = time_point(mode, instance.stream(), protocol, phase);
      memory.sample();
      record.n_warmup = timing.n_warmup;
      record.n_repeat = timing.n_repeat;
      record.stats = summarize(timing.samples_ns);
      if (gpu_state) {
        readings.window.calls = timing.timed_calls;
        const EnergyFigure energy =
            energy_of_point(mode, instance.stream(), protocol, *gpu_state, readings.window, record.stats.median_ns);
        record.joules_per_call = energy.joules_per_call;
        record.energy_window_s = energy.window_s;
      }
      record.samples_ns = std::move(timing.samples_ns);
      record.sample_sm_clock_mhz = std::move(timing.sample_sm_clock_mhz);
      record.noise = timing.noise;
      const Work work = kernel.work_of(point.params, point.mode);
      record.flops = work.flops;
      record.bytes = work.bytes;
      record.status = "passed";
      if (request.check) {
        const CheckResult check = mode.check();
        memory.sample();
        record.message = check.detail;
        if (!check.passed) record.status = "failed";
      }
      record.device_peak_bytes = std::max<std::uint64_t>(memory.peak_bytes(), instance.device_bytes());
    } catch (const std::exception& e) {
      record.status = "error";
      record.message = e.what();
      cache_.drop();
      // A CUDA error can leave the context unusable: a fresh worker takes the next point.
      result.worker_exits = on_gpu;
    }
  }

  Json new_nccl_id() {
    try {
      bind_once();
      return {{"type", "nccl_id"}, {"id", nccl_.new_unique_id()}};
    } catch (const std::exception& e) { return {{"type", "nccl_id"}, {"error", e.what()}}; }
  }

  // Binds the GPU before a point of a cuda implementation. False when it cannot be bound: the point
  // is then an `error` with the reason, and a fresh worker takes the next point.
  bool bound_for(const ImplementationSpec& implementation, MeasureResult& result) {
    if (implementation.backend != Backend::cuda) return true;
    try {
      bind_once();
      return true;
    } catch (const std::exception& e) {
      result.record.status = "error";
      result.record.message = e.what();
      result.worker_exits = true;
      return false;
    }
  }

  // Makes this worker's CUDA context, at its first GPU point rather than at its hello: a worker that
  // its rank keeps idle while the other worker measures (a sweep of Python implementations alone)
  // holds no context beside that worker's. A second context on the GPU, idle, slowed a pass bound by
  // the host CPU (Liger's at 1024 tokens) by 10-20% on H100 and H200 hosts.
  void bind_once() {
    if (!unbound_ordinal_) return;
    bind_gpu(*unbound_ordinal_);
    unbound_ordinal_.reset();
  }

  // The L2 cache of this worker's GPU: the cold protocol's default flush.
  std::int64_t l2_cache_bytes() {
#ifdef KERNELSWEEP_HAVE_CUDA
    if (l2_bytes_ == 0) l2_bytes_ = gpu_l2_cache_bytes();
#endif
    return l2_bytes_;
  }

  // NVML's reader of this worker's GPU, opened at its first GPU point; none where NVML is missing
  // (the point is measured all the same, its GPU state not recorded).
  const GpuStateReader* gpu_state_reader() {
    if (!gpu_state_opened_) {
      gpu_state_opened_ = true;
      std::string why_not;
      gpu_state_ = GpuStateReader::open(gpu_uuid_, why_not);
      if (!gpu_state_)
        std::fprintf(stderr, "kernelsweep worker: the GPU's clocks and power are not recorded: %s\n", why_not.c_str());
    }
    return gpu_state_.get();
  }

  PipeChannel channel_;
  ParsedText protocols_;  // of the requests received as bytes
  const Registry& registry_;
  std::string gpu_uuid_;
  std::int64_t l2_bytes_ = 0;
  bool gpu_state_opened_ = false;
  std::unique_ptr<GpuStateReader> gpu_state_;
  int local_rank_;
  int gpu_count_ = 0;
  std::optional<int> unbound_ordinal_;  // the GPU this worker measures on, until its first GPU point binds it
  InstanceCache cache_;
  NcclMember nccl_;  // the gangs' communicators, kept between their points
};

}  // namespace

int run_worker(const WorkerArguments& args, Registry& registry) {
  std::signal(SIGPIPE, SIG_IGN);
  // A stop (Ctrl-C, scancel, a time limit) is the rank's to handle: it saves what it has and then
  // ends its worker. A worker that died of the same signal first would have its point recorded as
  // crashed. The rank's death still ends the worker (PR_SET_PDEATHSIG in worker_process.cpp).
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  try {
    load_requested_plugins(args.plugins, registry);
  } catch (const PluginError& e) {
    std::fprintf(stderr, "kernelsweep worker: %s\n", e.what());
    return 2;
  }
  Worker worker(args, registry);
  return worker.serve();
}

}  // namespace ks
