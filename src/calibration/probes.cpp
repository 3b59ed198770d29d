#include "calibration/probes.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "calibration/datasheets.h"
#include "common/clock.h"
#include "measure/do_bench.h"

namespace ks {
namespace {

constexpr double kProbeTimeoutS = 120;
constexpr std::int64_t kGpuStreamMib = 1024;

// A CPU's stream arrays: four times its last-level cache, at least 64 MiB and at most 512 MiB (beyond
// which the figure no longer changes, while the time a calibration takes still grows).
std::int64_t cpu_stream_mib() {
  const std::int64_t cache_mib = (cpu_last_level_cache_bytes() + (1 << 20) - 1) >> 20;
  return std::clamp<std::int64_t>(4 * cache_mib, 64, 512);
}

Point probe(const Registry& registry, const std::string& kernel, const std::string& implementation, const Json& given) {
  const KernelSpec* spec = registry.find(kernel);
  if (!spec) throw std::logic_error("calibration: no kernel " + kernel + " is registered");
  Point point;
  point.kernel = kernel;
  point.implementation = implementation;
  point.mode = "forward";
  point.params = Json::object();
  for (const ParamSpec& p : spec->parameters)
    point.params[p.name] = given.contains(p.name) ? given.at(p.name) : p.default_value;
  point.timeout_s = kProbeTimeoutS;
  point.key = point_digest(point);
  return point;
}

// The rate a passed probe reached: GB/s for stream, TFLOP/s for the others.
double rate_of(const Registry& registry, const Point& point, double ns) {
  const Work work = registry.find(point.kernel)->work_of(point.params, point.mode);
  return point.kernel == "stream" ? work.bytes / ns : work.flops / ns / 1e3;
}

void note(DeviceCalibration& device, const std::string& figure, double rate) {
  if (figure == "copy") device.copy_gbps = rate;
  else if (figure == "triad") device.triad_gbps = rate;
  else device.measured.tflops[figure] = rate;
}

}  // namespace

DeviceCalibration measure_probes(Backend backend, const std::vector<Probe>& probes, const Registry& registry,
                                 const ProbeRunner& run) {
  DeviceCalibration device;
  device.backend = to_string(backend);
  for (const Probe& probe : probes) {
    const ProbeResult result = run(probe.point);
    if (result.status == "passed" && result.fastest_ns > 0) {
      note(device, probe.figure, rate_of(registry, probe.point, result.fastest_ns));
    } else {
      device.problems.push_back(fmt::format("{} {}: {}{}{}", probe.point.kernel, probe.figure, result.status,
                                            result.message.empty() ? "" : ": ", result.message));
    }
  }
  // std::fmax keeps the one that is known when the other is NaN.
  device.measured.memory_gbps = std::fmax(device.copy_gbps, device.triad_gbps);
  return device;
}

std::vector<Probe> probe_points(Backend backend, const Registry& registry) {
  std::vector<Probe> probes;
  const auto stream = [&](const char* figure, const char* op, std::int64_t mib) {
    probes.push_back({figure, probe(registry, "stream", to_string(backend), {{"op", op}, {"mib", mib}})});
  };
  if (backend == Backend::cuda) {
    stream("copy", "copy", kGpuStreamMib);
    stream("triad", "triad", kGpuStreamMib);
    // 4096³ keeps the slow dtypes' calls short (2 ms of fp64 on an H100); 8192³ gives the fast ones
    // time to reach their steady clock.
    for (const char* dtype : {"fp64", "fp32", "tf32"})
      probes.push_back({dtype, probe(registry, "peak_flops", "cuda", {{"dtype", dtype}, {"size", 4096}})});
    for (const char* dtype : {"bf16", "fp16", "fp8"})
      probes.push_back({dtype, probe(registry, "peak_flops", "cuda", {{"dtype", dtype}, {"size", 8192}})});
  } else {
    stream("copy", "copy", cpu_stream_mib());
    stream("triad", "triad", cpu_stream_mib());
    for (const char* dtype : {"fp32", "fp64"})
      probes.push_back({dtype, probe(registry, "fma_chains", "cpu", {{"dtype", dtype}})});
  }
  return probes;
}

std::vector<Probe> sentinel_probes(Backend backend, const Registry& registry) {
  // On a GPU fp32 (steady: its CUDA cores stay under the power limit) and bf16 (the tensor cores,
  // at the power limit, held to the wider tolerance of fleet_health.h).
  const std::vector<std::string> figures = backend == Backend::cuda ? std::vector<std::string>{"copy", "fp32", "bf16"}
                                                                    : std::vector<std::string>{"copy", "fp64"};
  std::vector<Probe> out;
  for (Probe& probe : probe_points(backend, registry))
    if (std::find(figures.begin(), figures.end(), probe.figure) != figures.end()) out.push_back(std::move(probe));
  return out;
}

ProtocolSpec probe_protocol() {
  ProtocolSpec protocol;
  protocol.name = "do_bench";
  protocol.warmup_ms = 10;
  protocol.rep_ms = 50;
  protocol.min_repeat = 3;
  protocol.flush_bytes = 0;
  protocol.sm_clock_per_sample = false;
  return protocol;
}

RankCalibration calibrate_rank(int rank, const HostInfo& host, const GpuInfo& gpu, const Registry& registry,
                               const ProbeRunner& run) {
  const auto start = std::chrono::steady_clock::now();
  RankCalibration calibration;
  calibration.rank = rank;
  calibration.host = host.hostname;
  calibration.measured_at = iso_utc_now();
  calibration.cpu = measure_probes(Backend::cpu, probe_points(Backend::cpu, registry), registry, run);
  calibration.cpu.cache_bytes = cpu_last_level_cache_bytes();
  calibration.cpu.device = host.cpu_model;
  calibration.cpu.cores = host.cpus_allowed;
  if (gpu.index >= 0) {
    DeviceCalibration device = measure_probes(Backend::cuda, probe_points(Backend::cuda, registry), registry, run);
    device.cache_bytes = static_cast<std::int64_t>(gpu.l2_cache_bytes);
    device.device = gpu.name;
    device.uuid = gpu.uuid;
    device.driver = gpu.driver_version;
    if (const auto sheet = datasheet_of(gpu.name)) device.datasheet = sheet->rates;
    calibration.gpu = std::move(device);
  }
  calibration.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return calibration;
}

}  // namespace ks
