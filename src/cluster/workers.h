#pragma once
// A rank's workers: the C++ worker (`kernelsweep worker`) for built-in and plugin implementations,
// and the Python worker (`python3 -m kernelsweep.worker`) for Python ones, started when first
// needed. Both are handled alike (crashes, timeouts, restarts: worker_process.h). The rank measures
// one point at a time, so only one worker measures at a time; before a point goes to one, the other
// lets go of the instance it keeps between points, so that device memory is the point's alone; the
// C++ worker ends while the Python worker measures (Workers::make_way_for).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "cluster/worker_process.h"
#include "kernels/kernel.h"
#include "plugins/python_modules.h"

namespace ks {

// True when the Python worker measures the point's implementation.
bool runs_in_python(const Registry& registry, const Point& point);
// True when the point's implementation is a cuda one: only a rank with a GPU measures it.
bool needs_gpu(const Registry& registry, const Point& point);

class Workers {
 public:
  Workers(const Registry& registry, const std::string& executable, int local_rank,
          const std::vector<std::string>& plugins, const PythonSetup& python);

  // The C++ worker's hello, starting it if needed (WorkerProcess::ensure_started).
  const nlohmann::json& ensure_started();
  // The Python worker's hello, starting it if needed; throws WorkerStartError when it does not start.
  const nlohmann::json& ensure_python_started();

  bool busy() const { return current_ && current_->busy(); }
  void begin(const MeasureRequest& request);
  std::optional<MeasureResult> poll(std::chrono::microseconds wait);
  void stop();

  // The NCCL communicators of gangs, made and kept by the C++ worker: a new unique id from it (throws
  // std::runtime_error with the reason when it has none to give), whether it keeps one for `members`
  // (since its present start), and the note that it now does (or no longer does).
  std::string new_nccl_id();
  bool keeps_nccl_communicator(const std::vector<int>& members) const;
  void note_nccl_communicator(const std::vector<int>& members, bool kept);

  void set_waiting_hook(std::function<void()> hook);

 private:
  WorkerProcess& python();
  void make_way_for(const WorkerProcess& next);
  bool keeps_any_nccl_communicator() const;
  bool made_by_present_worker(int start) const;

  const Registry& registry_;
  WorkerProcess native_;
  std::vector<std::string> python_arguments_, python_environment_;
  std::unique_ptr<WorkerProcess> python_;
  WorkerProcess* current_ = nullptr;           // the worker of the point in flight, or of the last one
  std::map<std::vector<int>, int> nccl_kept_;  // members -> the C++ worker's start that made their communicator
  std::function<void()> hook_;
};

}  // namespace ks
