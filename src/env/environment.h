#pragma once
// What a run ran on. A rank knows its host, MPI library and git commit; the GPU facts come from the
// worker process (the only process that initialises CUDA) and are merged in.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace ks {

using Json = nlohmann::json;

struct GpuInfo {
  int index = -1;            // CUDA device ordinal as the worker sees it
  std::string name;          // "NVIDIA H200"
  std::string uuid;          // "GPU-…"
  std::string pci_bus_id;    // "0000:18:00.0"
  std::string architecture;  // "sm_90"
  std::size_t memory_bytes = 0;
  int multiprocessors = 0;
  std::size_t l2_cache_bytes = 0;  // its last-level cache
  // driver_version: the NVIDIA kernel module ("580.159.03", what nvidia-smi shows), read from
  // /proc/driver/nvidia/version where it exists; cuda_driver_version: cudaDriverGetVersion ("13.0").
  std::string driver_version, cuda_runtime_version, cublas_version, nccl_version;
  std::string cuda_driver_version;
};

struct HostInfo {
  std::string hostname;
  std::string cpu_vendor;  // "intel", "amd", or /proc/cpuinfo's vendor_id lowercased
  std::string cpu_model;   // /proc/cpuinfo's "model name"
  int cpu_cores = 0;       // physical cores (distinct physical id/core id pairs), else processors
  // Processors this rank may run on (sched_getaffinity), which its workers inherit: 1 where the
  // launcher bound it to a core (mpirun does so when it starts two ranks or fewer); 0 when unknown.
  int cpus_allowed = 0;
  std::string architecture;  // uname's machine: "x86_64"
  std::string os;            // PRETTY_NAME from /etc/os-release
  std::string mpi_version;   // MPI_Get_library_version's first line
};

// Reads the host facts (no CUDA). mpi_version is filled by the caller that has MPI initialised.
HostInfo read_host_info();

// Queries CUDA device `ordinal` (worker process only); returns an empty GpuInfo (index -1) when
// built without CUDA or when no GPU is present.
GpuInfo read_gpu_info(int ordinal);

// Number of visible CUDA devices (0 without CUDA or GPU). Initialises CUDA: worker process only.
int visible_gpu_count();

Json to_json(const GpuInfo& gpu);
GpuInfo gpu_info_from_json(const Json& j);
Json to_json(const HostInfo& host);
HostInfo host_info_from_json(const Json& j);

// The ExecutionEnvironment document's spec: {hardware:{vendor, product, formFactor, architecture,…},
// software:{driver, cudaRuntime, cublas, nccl, mpi, os,…}}. A CPU rank (gpu.index < 0) describes its
// CPU. Host-specific values that do not change a figure (hostname, GPU UUID, PCI bus id) stay out,
// so identical machines share one environment digest; the run records carry them.
Json environment_spec(const HostInfo& host, const GpuInfo& gpu);

// The driver version in the first line of /proc/driver/nvidia/version, either layout:
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu ..." or
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...";
// empty if none.
std::string nvidia_driver_version(const std::string& proc_version_line);

// A GPU's marketing name split into product and form factor: "NVIDIA A100-SXM4-80GB" gives
// {"NVIDIA A100", "SXM4-80GB"}; "NVIDIA H200" gives {"NVIDIA H200", "SXM5-141GB"}; a name we do not
// know gives {name, ""}.
struct GpuProduct {
  std::string product;
  std::string form_factor;
};
GpuProduct gpu_product(const std::string& name);

}  // namespace ks
