#pragma once
// The Python worker as tests drive it: started by the rank's own WorkerProcess, and handed requests
// for points of built-in kernels.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/worker_process.h"

namespace ks::testing {

// `python3 -m kernelsweep.worker` run by `interpreter`, with `path` first on its PYTHONPATH.
std::unique_ptr<WorkerProcess> start_python_worker(const std::string& interpreter,
                                                   const std::vector<std::string>& path = {});

// A request for a point of a built-in kernel: its parameters' defaults, with `overrides`; a short
// protocol (warm-up 1 ms, repetitions 3 ms) and a timeout of 300 s.
MeasureRequest request_for(const std::string& kernel, const std::string& implementation, const std::string& mode,
                           const nlohmann::json& overrides = nlohmann::json::object());

}  // namespace ks::testing
