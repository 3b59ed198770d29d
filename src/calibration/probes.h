#pragma once
// How a rank calibrates itself: it measures the probe points of its devices, one after the other,
// through its own worker, as it measures any point (the caller runs them: `ProbeRunner`), and makes
// their rates into its calibration.
//
//   CPU:  stream copy and triad over arrays four times the last-level cache (64 to 512 MiB each),
//         fma_chains in fp32 and fp64 on every core the rank may use;
//   GPU:  stream copy and triad over 1 GiB arrays, peak_flops (a cuBLASLt product of signed random
//         data) in fp64, fp32 and tf32 at 4096³, bf16, fp16 and fp8 (where the GPU has fp8) at 8192³.
//
// Each rate is of the probe's fastest repetition: what the device can do, which a shared or busy
// machine's slower repetitions do not tell. A device's memory bandwidth is the better of copy and
// triad; a probe that does not pass leaves its rate unknown and says why in `problems`.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "config/sweep_spec.h"
#include "env/environment.h"
#include "kernels/kernel.h"
#include "plan/point.h"

namespace ks {

struct ProbeResult {
  std::string status;   // as a point's: passed, failed, error, crashed, timeout
  std::string message;  // why it did not pass
  double fastest_ns = std::numeric_limits<double>::quiet_NaN();  // its fastest repetition
};
using ProbeRunner = std::function<ProbeResult(const Point& point)>;

// One probe: the figure it measures (copy, triad, or a dtype's product rate) and its point.
struct Probe {
  std::string figure;
  Point point;
};

// The probes of a device of `backend` (cpu or cuda), every parameter of their points filled in.
std::vector<Probe> probe_points(Backend backend, const Registry& registry);

// The sentinel's probes (calibration/sentinel.h), a subset of the device's: its memory copy, and its
// products: fp32 and bf16 on a GPU (a steady figure, and the dtype most kernels use), fp64 on a CPU.
// Half a second or less.
std::vector<Probe> sentinel_probes(Backend backend, const Registry& registry);

// Measures `probes` of a device of `backend` with `run`, one after the other: the figures they give,
// memory_gbps the better of copy and triad, the probes that did not pass in `problems`.
DeviceCalibration measure_probes(Backend backend, const std::vector<Probe>& probes, const Registry& registry,
                                 const ProbeRunner& run);

// How the probes are timed: do_bench, 10 ms of warm-up and 50 ms of repetitions (at least 3), with no
// cache flush (the arrays are larger than any cache; a product reads its operands many times). A
// product's rate is its fastest repetition's, as a burst of large products reaches it (torch's fastest
// 8192³ matmul); longer warm-up and repetitions hold a power-limited H100 at its cap and read lower
// (bf16 707-775 TFLOP/s with 100 ms of each, against torch's 795 on the same card).
ProtocolSpec probe_protocol();

// Measures the rank's devices with `run`: its CPU, and its GPU when `gpu` is one (index ≥ 0).
RankCalibration calibrate_rank(int rank, const HostInfo& host, const GpuInfo& gpu, const Registry& registry,
                               const ProbeRunner& run);

}  // namespace ks
