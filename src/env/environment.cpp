#include "env/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "kernels/common/cores.h"

#ifdef KERNELSWEEP_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "kernels/common/cublas.h"
#if __has_include(<nccl.h>)
#include <nccl.h>
// Weak: the library links NCCL only where CMake found it; without it the symbol is null and the
// NCCL version is left empty instead of failing the link.
#pragma weak ncclGetVersion
#define KS_ENV_HAVE_NCCL_HEADER 1
#endif
#endif

namespace ks {
namespace {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

// "key : value" lines of /proc/cpuinfo, or "KEY=value" lines of /etc/os-release.
std::pair<std::string, std::string> split_line(const std::string& line, char separator) {
  const auto at = line.find(separator);
  if (at == std::string::npos) return {trim(line), {}};
  return {trim(line.substr(0, at)), trim(line.substr(at + 1))};
}

std::string unquote(std::string value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
    return value.substr(1, value.size() - 2);
  return value;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string cpu_vendor_name(const std::string& vendor_id) {
  if (vendor_id == "GenuineIntel") return "intel";
  if (vendor_id == "AuthenticAMD") return "amd";
  return lowercase(vendor_id);
}

void read_cpuinfo(HostInfo& host) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, physical_id;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  int processors = 0;
  while (std::getline(in, line)) {
    const auto [key, value] = split_line(line, ':');
    if (key == "processor") ++processors;
    else if (key == "model name" && host.cpu_model.empty()) host.cpu_model = value;
    else if (key == "vendor_id" && host.cpu_vendor.empty()) host.cpu_vendor = cpu_vendor_name(value);
    else if (key == "physical id") physical_id = value;
    else if (key == "core id") cores.emplace(physical_id, value);
  }
  host.cpu_cores = cores.empty() ? processors : static_cast<int>(cores.size());
}

std::string read_os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    const auto [key, value] = split_line(line, '=');
    if (key == "PRETTY_NAME") return unquote(value);
  }
  return {};
}

#ifdef KERNELSWEEP_HAVE_CUDA
std::string read_nvidia_kernel_module_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  return std::getline(in, line) ? nvidia_driver_version(line) : std::string();
}

// cudaDriverGetVersion / cudaRuntimeGetVersion encode 1000*major + 10*minor.
std::string cuda_version_string(int code) { return fmt::format("{}.{}", code / 1000, (code % 1000) / 10); }

// cuBLAS and NCCL (2.9 and later) encode 10000*major + 100*minor + patch.
std::string library_version_string(long long code) {
  return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
}

std::string format_uuid(const cudaUUID_t& uuid) {
  std::string hex;
  for (unsigned char byte : uuid.bytes) hex += fmt::format("{:02x}", byte);
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                     hex.substr(20, 12));
}

std::string nccl_version() {
#ifdef KS_ENV_HAVE_NCCL_HEADER
  int code = 0;
  if (&ncclGetVersion != nullptr && ncclGetVersion(&code) == ncclSuccess) return library_version_string(code);
#endif
  return {};
}

void read_library_versions(GpuInfo& gpu) {
  int code = 0;
  if (cudaDriverGetVersion(&code) == cudaSuccess) gpu.cuda_driver_version = cuda_version_string(code);
  if (cudaRuntimeGetVersion(&code) == cudaSuccess) gpu.cuda_runtime_version = cuda_version_string(code);
  gpu.cublas_version = library_version_string(static_cast<long long>(cublasLtGetVersion()));
  gpu.nccl_version = nccl_version();
}
#endif

void put_if_set(Json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

Json gpu_environment_spec(const HostInfo& host, const GpuInfo& gpu) {
  const GpuProduct product = gpu_product(gpu.name);
  Json hardware = {{"vendor", "nvidia"}, {"product", product.product}};
  put_if_set(hardware, "formFactor", product.form_factor);
  put_if_set(hardware, "architecture", gpu.architecture);
  hardware["memoryBytes"] = gpu.memory_bytes;
  hardware["multiprocessors"] = gpu.multiprocessors;
  Json software = Json::object();
  put_if_set(software, "driver", gpu.driver_version);
  put_if_set(software, "cudaDriver", gpu.cuda_driver_version);
  put_if_set(software, "cudaRuntime", gpu.cuda_runtime_version);
  put_if_set(software, "cublas", gpu.cublas_version);
  put_if_set(software, "nccl", gpu.nccl_version);
  put_if_set(software, "mpi", host.mpi_version);
  put_if_set(software, "os", host.os);
  return {{"hardware", hardware}, {"software", software}};
}

Json cpu_environment_spec(const HostInfo& host) {
  Json hardware = Json::object();
  put_if_set(hardware, "vendor", host.cpu_vendor.empty() ? std::string("unknown") : host.cpu_vendor);
  put_if_set(hardware, "product", host.cpu_model);
  put_if_set(hardware, "architecture", host.architecture);
  hardware["cores"] = host.cpu_cores;
  Json software = Json::object();
  put_if_set(software, "mpi", host.mpi_version);
  put_if_set(software, "os", host.os);
  return {{"hardware", hardware}, {"software", software}};
}

}  // namespace

HostInfo read_host_info() {
  HostInfo host;
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) == 0) host.hostname = name.data();
  read_cpuinfo(host);
  host.cpus_allowed = count_usable_cores();
  utsname system{};
  if (uname(&system) == 0) host.architecture = system.machine;
  host.os = read_os_pretty_name();
  return host;
}

GpuInfo read_gpu_info([[maybe_unused]] int ordinal) {
  GpuInfo gpu;
#ifdef KERNELSWEEP_HAVE_CUDA
  if (ordinal < 0 || ordinal >= visible_gpu_count()) return gpu;
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, ordinal) != cudaSuccess) return gpu;
  gpu.index = ordinal;
  gpu.name = properties.name;
  gpu.uuid = format_uuid(properties.uuid);
  std::array<char, 32> bus_id{};
  if (cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), ordinal) == cudaSuccess)
    gpu.pci_bus_id = lowercase(bus_id.data());
  gpu.architecture = fmt::format("sm_{}{}", properties.major, properties.minor);
  gpu.memory_bytes = properties.totalGlobalMem;
  gpu.multiprocessors = properties.multiProcessorCount;
  gpu.l2_cache_bytes = static_cast<std::size_t>(properties.l2CacheSize);
  gpu.driver_version = read_nvidia_kernel_module_version();
  read_library_versions(gpu);
#endif
  return gpu;
}

int visible_gpu_count() {
#ifdef KERNELSWEEP_HAVE_CUDA
  int count = 0;
  // No driver or no device is an answer (zero GPUs), not an error of the caller.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // reset the runtime's last error so later calls do not report this one
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

// The JSON keys are the members' names; a key that is missing reads as the member's default.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuInfo, index, name, uuid, pci_bus_id, architecture, memory_bytes,
                                                multiprocessors, l2_cache_bytes, driver_version, cuda_driver_version,
                                                cuda_runtime_version, cublas_version, nccl_version)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HostInfo, hostname, cpu_vendor, cpu_model, cpu_cores, cpus_allowed,
                                                architecture, os, mpi_version)

Json to_json(const GpuInfo& gpu) { return gpu; }
GpuInfo gpu_info_from_json(const Json& j) { return j.get<GpuInfo>(); }
Json to_json(const HostInfo& host) { return host; }
HostInfo host_info_from_json(const Json& j) { return j.get<HostInfo>(); }

Json environment_spec(const HostInfo& host, const GpuInfo& gpu) {
  return gpu.index >= 0 ? gpu_environment_spec(host, gpu) : cpu_environment_spec(host);
}

std::string nvidia_driver_version(const std::string& proc_version_line) {
  // The version is the first word made of digits and dots (at least one dot) in either layout:
  // "... Kernel Module  580.159.03  Thu ..." or "... Open Kernel Module for x86_64  580.159.04  ...".
  std::istringstream words(proc_version_line);
  for (std::string word; words >> word;) {
    const bool digits_and_dots = word.find_first_not_of("0123456789.") == std::string::npos;
    if (digits_and_dots && std::count(word.begin(), word.end(), '.') >= 1 &&
        std::isdigit(static_cast<unsigned char>(word.front())))
      return word;
  }
  return {};
}

GpuProduct gpu_product(const std::string& name) {
  // Names that carry the form factor after a dash: "NVIDIA A100-SXM4-80GB", "Tesla V100-PCIE-16GB".
  if (const auto dash = name.find('-'); dash != std::string::npos) return {name.substr(0, dash), name.substr(dash + 1)};
  // Names that do not: the form factor follows from the exact name (and the memory it implies).
  static const std::pair<std::string_view, GpuProduct> known[] = {
      {"NVIDIA H200", {"NVIDIA H200", "SXM5-141GB"}},          {"NVIDIA H200 NVL", {"NVIDIA H200", "NVL-141GB"}},
      {"NVIDIA H100 80GB HBM3", {"NVIDIA H100", "SXM5-80GB"}}, {"NVIDIA H100 PCIe", {"NVIDIA H100", "PCIe-80GB"}},
      {"NVIDIA H100 NVL", {"NVIDIA H100", "NVL-94GB"}},        {"NVIDIA A100 80GB PCIe", {"NVIDIA A100", "PCIe-80GB"}},
  };
  for (const auto& [known_name, product] : known)
    if (name == known_name) return product;
  return {name, ""};
}

}  // namespace ks
