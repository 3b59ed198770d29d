#pragma once
// A realistic machine and run for tests and benchmarks that build documents from one: a node of H200s
// (its host and GPUs) timing the chunked distillation cosine loss, as a real sweep records it.
#include <string>

#include "common/canonical_json.h"
#include "env/environment.h"
#include "measure/measurement.h"
#include "record/run_record.h"

namespace ks::testing {

// GPU `index` of the node, an H200 with the driver, CUDA, cuBLAS and NCCL versions filled in.
GpuInfo h200_gpu(int index = 0, const std::string& uuid = "GPU-3b1f9c2e-8d4a-4f6b-9e21-7c5d0a8b6f13",
                 const std::string& pci_bus_id = "0000:18:00.0");

// The node's host: a 112-core Xeon running Ubuntu and Open MPI (`mpi_version`, as the library reports it).
HostInfo h200_node_host(const std::string& hostname, const std::string& mpi_version);

// The BenchmarkProtocol content of the default do_bench protocol on a GPU.
Json do_bench_gpu_protocol();

// The timing of the seed document's run (tests/data/seed): its median and 20th and 80th percentiles in
// whole nanoseconds, as its latencies give them, with a mean, extremes and spread to go with them.
Statistics seed_statistics();

// A passed run of the fused distillation kernel on the node with `params`, timed as `stats` says; its
// mode, rank and times are the caller's to set.
RunRecord distill_run_record(const Json& params, const Statistics& stats = seed_statistics());

}  // namespace ks::testing
