#include "support/python_worker.h"

#include "plugins/python_modules.h"
#include "support/kernels.h"

namespace ks::testing {

std::unique_ptr<WorkerProcess> start_python_worker(const std::string& interpreter,
                                                   const std::vector<std::string>& path) {
  PythonSetup setup;
  setup.interpreter = interpreter;
  setup.path = path;
  return std::make_unique<WorkerProcess>(
      std::vector<std::string>{interpreter, "-m", "kernelsweep.worker", "--local-rank", "0"}, setup.environment());
}

MeasureRequest request_for(const std::string& kernel, const std::string& implementation, const std::string& mode,
                           const nlohmann::json& overrides) {
  MeasureRequest request;
  request.point.kernel = kernel;
  request.point.implementation = implementation;
  request.point.mode = mode;
  request.point.params = nlohmann::json::object();
  for (const auto& p : builtin_kernel(kernel).parameters) request.point.params[p.name] = p.default_value;
  for (const auto& [key, value] : overrides.items()) request.point.params[key] = value;
  request.point.timeout_s = 300;
  request.protocol.warmup_ms = 1;
  request.protocol.rep_ms = 3;
  return request;
}

}  // namespace ks::testing
