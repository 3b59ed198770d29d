#include "cluster/worker.h"

#include <csignal>
#include <exception>
#include <memory>

#include "cluster/gpu_binding.h"
#include "cluster/pipe_channel.h"
#include "cluster/worker_messages.h"
#include "common/canonical_json.h"
#include "common/clock.h"
#include "env/environment.h"
#include "measure/do_bench.h"

namespace ks {
namespace {

// The instance of the last shape, kept while the next request has the same shape (its other modes).
class InstanceCache {
 public:
  Instance& get(const KernelSpec& kernel, const Point& point) {
    const std::string key = point.shape_key();
    if (!instance_ || key != key_) {
      instance_.reset();  // free the old shape's memory before the new one allocates
      instance_ = kernel.instantiate(point.implementation, point.params);
      key_ = key;
    }
    return *instance_;
  }
  void drop() { instance_.reset(); key_.clear(); }

 private:
  std::unique_ptr<Instance> instance_;
  std::string key_;
};

class Worker {
 public:
  Worker(const WorkerArguments& args, const Registry& registry)
      : channel_(args.in_fd, args.out_fd), registry_(registry), local_rank_(args.local_rank) {}

  int serve() {
    if (!channel_.send(hello().dump())) return 0;
    std::string text;
    while (channel_.receive(text, std::chrono::microseconds(-1)) == ReadOutcome::message) {
      const Json message = Json::parse(text);
      if (message.at("type") == "stop") break;
      const MeasureResult result = measure(decode_request(message));
      if (!channel_.send(encode(result))) break;
      if (result.worker_exits) break;
    }
    return 0;
  }

 private:
  Json hello() {
    gpu_count_ = visible_gpu_count();
    GpuInfo gpu;
    std::string problem;
    if (gpu_count_ > 0) {
      const int ordinal = choose_gpu(local_rank_, gpu_count_);
      try {
        bind_gpu(ordinal);
        gpu = read_gpu_info(ordinal);
      } catch (const std::exception& e) {
        problem = e.what();
        gpu_count_ = 0;
      }
    }
    return {{"type", "hello"}, {"gpu_count", gpu_count_}, {"gpu", to_json(gpu)},
            {"host", to_json(read_host_info())}, {"problem", problem}};
  }

  MeasureResult measure(const MeasureRequest& request) {
    MeasureResult result;
    result.started_at = iso_utc_now();
    const Point& point = request.point;
    const KernelSpec* kernel = registry_.find(point.kernel);
    const ImplementationSpec* implementation = kernel ? kernel->implementation(point.implementation) : nullptr;
    if (!implementation) {
      result.status = "error";
      result.message = "worker does not know " + point.kernel + "/" + point.implementation;
    } else if (implementation->backend == Backend::cuda && gpu_count_ == 0) {
      result.status = "skipped";
      result.message = "no GPU visible to this worker";
    } else {
      time_and_check(*kernel, *implementation, request, result);
    }
    result.ended_at = iso_utc_now();
    return result;
  }

  void time_and_check(const KernelSpec& kernel, const ImplementationSpec& implementation,
                      const MeasureRequest& request, MeasureResult& result) {
    const Point& point = request.point;
    try {
      const Protocol protocol = resolve_protocol(request.protocol, implementation.backend);
      result.protocol = protocol_to_json(protocol);
      Instance& instance = cache_.get(kernel, point);
      result.timing = do_bench(instance, point.mode, protocol);
      result.stats = summarize(result.timing.samples_ns);
      result.flops = instance.flops(point.mode);
      result.bytes = instance.bytes(point.mode);
      result.device_peak_bytes = instance.device_peak_bytes();
      result.status = "passed";
      if (request.check) {
        const CheckResult check = instance.check(point.mode);
        result.message = check.detail;
        if (!check.passed) result.status = "failed";
      }
    } catch (const std::exception& e) {
      result.status = "error";
      result.message = e.what();
      cache_.drop();
      // A CUDA error can leave the context unusable: a fresh worker takes the next point.
      result.worker_exits = implementation.backend == Backend::cuda;
    }
  }

  PipeChannel channel_;
  const Registry& registry_;
  int local_rank_;
  int gpu_count_ = 0;
  InstanceCache cache_;
};

}  // namespace

int run_worker(const WorkerArguments& args, const Registry& registry) {
  std::signal(SIGPIPE, SIG_IGN);
  Worker worker(args, registry);
  return worker.serve();
}

}  // namespace ks
