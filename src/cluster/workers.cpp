#include "cluster/workers.h"

#include <algorithm>
#include <string>

namespace ks {

bool runs_in_python(const Registry& registry, const Point& point) {
  const KernelSpec* kernel = registry.find(point.kernel);
  const ImplementationSpec* implementation = kernel ? kernel->implementation(point.implementation) : nullptr;
  return implementation && !implementation->python_module.empty();
}

bool needs_gpu(const Registry& registry, const Point& point) {
  const KernelSpec* kernel = registry.find(point.kernel);
  const ImplementationSpec* implementation = kernel ? kernel->implementation(point.implementation) : nullptr;
  return implementation && implementation->backend == Backend::cuda;
}

Workers::Workers(const Registry& registry, const std::string& executable, int local_rank,
                 const std::vector<std::string>& plugins, const PythonSetup& python)
    : registry_(registry),
      native_(executable, local_rank, plugins),
      python_arguments_{python.interpreter_to_run(), "-m", "kernelsweep.worker", "--local-rank",
                        std::to_string(local_rank)},
      python_environment_(python.environment()) {
  for (const std::string& module : python.modules) {
    python_arguments_.push_back("--module");
    python_arguments_.push_back(module);
  }
}

WorkerProcess& Workers::python() {
  if (!python_) {
    python_ = std::make_unique<WorkerProcess>(python_arguments_, python_environment_);
    python_->set_waiting_hook(hook_);
  }
  return *python_;
}

const nlohmann::json& Workers::ensure_started() { return native_.ensure_started(); }

const nlohmann::json& Workers::ensure_python_started() { return python().ensure_started(); }

void Workers::begin(const MeasureRequest& request) {
  WorkerProcess& next = runs_in_python(registry_, request.point) ? python() : native_;
  make_way_for(next);
  current_ = &next;
  current_->begin(request);
}

// Before a worker measures, the other lets go of what it holds on the GPU. The Python worker, whose
// start takes seconds (torch, compiled kernels), lets go of its memory. The C++ worker ends: a second
// CUDA context on the GPU, even idle, slows what the Python worker measures where the host CPU bounds
// it, and the C++ worker starts again far sooner (no interpreter, no imports), making its context at
// its next GPU point. It stays, letting go of its memory only, while it keeps gangs' NCCL
// communicators, which every member of the gang would have to make again.
void Workers::make_way_for(const WorkerProcess& next) {
  if (&next != &native_ && native_.running() && !keeps_any_nccl_communicator()) native_.stop();
  else if (current_ && current_ != &next) current_->release();
}

bool Workers::keeps_any_nccl_communicator() const {
  return std::any_of(nccl_kept_.begin(), nccl_kept_.end(),
                     [&](const auto& kept) { return made_by_present_worker(kept.second); });
}

// A communicator dies with the C++ worker that made it: only one made since its present start is kept.
bool Workers::made_by_present_worker(int start) const { return native_.running() && start == native_.starts(); }

std::optional<MeasureResult> Workers::poll(std::chrono::microseconds wait) {
  if (!current_) throw std::logic_error("Workers::poll with no point in flight");
  return current_->poll(wait);
}

void Workers::stop() {
  native_.stop();
  if (python_) python_->stop();
}

void Workers::set_waiting_hook(std::function<void()> hook) {
  hook_ = hook;
  native_.set_waiting_hook(hook);
  if (python_) python_->set_waiting_hook(std::move(hook));
}

std::string Workers::new_nccl_id() {
  if (current_ && current_ != &native_) current_->release();
  current_ = &native_;
  const nlohmann::json answer = native_.ask({{"type", "nccl_id"}}, std::chrono::seconds(60));
  if (answer.contains("error")) throw std::runtime_error(answer.at("error").get<std::string>());
  return answer.at("id").get<std::string>();
}

bool Workers::keeps_nccl_communicator(const std::vector<int>& members) const {
  const auto found = nccl_kept_.find(members);
  return found != nccl_kept_.end() && made_by_present_worker(found->second);
}

void Workers::note_nccl_communicator(const std::vector<int>& members, bool kept) {
  if (kept) nccl_kept_[members] = native_.starts();
  else nccl_kept_.erase(members);
}

}  // namespace ks
