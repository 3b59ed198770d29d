#include "support/h200_node.h"

#include <cstdint>

#include "common/digest.h"
#include "measure/protocol.h"

namespace ks::testing {

GpuInfo h200_gpu(int index, const std::string& uuid, const std::string& pci_bus_id) {
  GpuInfo gpu;
  gpu.index = index;
  gpu.name = "NVIDIA H200";
  gpu.uuid = uuid;
  gpu.pci_bus_id = pci_bus_id;
  gpu.architecture = "sm_90";
  gpu.memory_bytes = 150109880320;
  gpu.multiprocessors = 132;
  gpu.driver_version = "580.159.04";
  gpu.cuda_driver_version = "13.0";
  gpu.cuda_runtime_version = "13.0";
  gpu.cublas_version = "13.1.0";
  gpu.nccl_version = "2.28.3";
  return gpu;
}

HostInfo h200_node_host(const std::string& hostname, const std::string& mpi_version) {
  HostInfo host;
  host.hostname = hostname;
  host.cpu_vendor = "intel";
  host.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  host.cpu_cores = 112;
  host.architecture = "x86_64";
  host.os = "Ubuntu 24.04.3 LTS";
  host.mpi_version = mpi_version;
  return host;
}

Json do_bench_gpu_protocol() {
  Protocol protocol;
  protocol.timer = "cuda_events";
  protocol.flush_bytes = std::int64_t{256} << 20;
  return protocol_to_json(protocol);
}

Statistics seed_statistics() {
  return {.median_ns = 14654464,
          .p20_ns = 14633984,
          .p80_ns = 14680064,
          .mean_ns = 14657210.5,
          .min_ns = 14620672,
          .max_ns = 14712832,
          .stddev_ns = 27113.9};
}

RunRecord distill_run_record(const Json& params, const Statistics& stats) {
  RunRecord r;
  r.point_id = sha256_hex(canonical_json(params));
  r.kernel = "distill_cosine_loss";
  r.implementation = "fused";
  r.params_json = canonical_json(params);
  r.status = "passed";
  r.host = "gpu-node-017";
  r.gpu_uuid = "GPU-3b1f9c2e-8d4a-4f6b-9e21-7c5d0a8b6f13";
  r.n_warmup = 2;
  r.n_repeat = 7;
  r.stats = stats;
  r.flops = 3.2283e12;
  r.bytes = 3.22e9;
  r.tflops = r.flops / r.stats.median_ns / 1e3;
  r.gbps = r.bytes / r.stats.median_ns;
  r.device_peak_bytes = 4563402752;
  return r;
}

}  // namespace ks::testing
