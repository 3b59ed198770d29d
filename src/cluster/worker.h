#pragma once
// The worker process: `kernelsweep worker`. It owns its rank's GPU (the MPI rank never initialises
// CUDA), keeps the instance of the last shape so that the modes of one shape share a setup, and
// answers measure requests until told to stop or its pipe closes.
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace ks {

struct WorkerArguments {
  int in_fd = 3;
  int out_fd = 4;
  int local_rank = 0;                // picks the GPU: local rank modulo the visible GPUs
  std::vector<std::string> plugins;  // plugin libraries to load, as the rank loaded them
};

// Loads args.plugins (and KERNELSWEEP_PLUGIN_PATH's) into `registry`, then serves requests.
int run_worker(const WorkerArguments& args, Registry& registry);

}  // namespace ks
