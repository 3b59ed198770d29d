#include "cluster/point_record.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "calibration/speed_of_light.h"
#include "common/canonical_json.h"
#include "common/clock.h"
#include "kernels/nccl/collective.h"
#include "measure/do_bench.h"
#include "measure/energy.h"

namespace ks {
namespace {

// The lowest and the median SM clock over the samples whose clock was read.
void summarize_sample_clocks(RunRecord& rec) {
  std::vector<double> read;
  for (const double mhz : rec.sample_sm_clock_mhz)
    if (!std::isnan(mhz)) read.push_back(mhz);
  if (read.empty()) return;
  std::sort(read.begin(), read.end());
  rec.sample_sm_clock_min_mhz = read.front();
  rec.sample_sm_clock_median_mhz = quantile_linear(read, 0.5);
}

// The point held against the device it ran on (its rank's GPU, or its CPU): its speed of light. A
// collective's figures are its links', not its device's: it gets none.
void add_speed_of_light(RunRecord& rec, const Point& point, const RankIdentity& me, bool on_gpu) {
  if (!me.calibration || collective::find_collective(point.kernel)) return;
  const DeviceCalibration* device =
      on_gpu ? (me.calibration->gpu ? &*me.calibration->gpu : nullptr) : &me.calibration->cpu;
  if (!device) return;
  const auto dtype = point.params.find("dtype");
  const SpeedOfLight sol =
      speed_of_light(rec.flops, rec.bytes, rec.stats.median_ns,
                     dtype != point.params.end() && dtype->is_string() ? dtype->get<std::string>() : "", *device);
  rec.bandwidth_pct = sol.bandwidth_pct;
  rec.compute_pct = sol.compute_pct;
  rec.sol_pct = sol.sol_pct;
  rec.flags = sol.flags;
}

}  // namespace

RunRecord make_record(const Point& point, const MeasureResult& r, const RankIdentity& me, bool on_gpu) {
  RunRecord rec = r.record;
  rec.point_id = point.id();
  rec.kernel = point.kernel;
  rec.implementation = point.implementation;
  rec.mode = point.mode;
  rec.repetition = point.repetition;
  rec.params_json = canonical_json(point.params);
  rec.rank = me.rank;
  rec.host = me.host.hostname;
  if (on_gpu) rec.gpu_uuid = me.gpu.uuid;
  // The quantiles the protocol asks for, from the raw samples: made here, for workers of every
  // language alike.
  if (r.protocol.is_object() && r.protocol.contains("quantiles"))
    rec.quantiles = quantiles_of(rec.samples_ns, r.protocol["quantiles"].get<std::vector<double>>());
  summarize_sample_clocks(rec);
  if (rec.stats.median_ns > 0) {
    rec.tflops = rec.flops / rec.stats.median_ns / 1e3;  // FLOP per ns = GFLOP/s
    rec.gbps = rec.bytes / rec.stats.median_ns;          // bytes per ns = GB/s
  }
  rec.gflops_per_joule = gflops_per_joule(rec.flops, rec.joules_per_call);
  if (rec.n_repeat > 0) add_speed_of_light(rec, point, me, on_gpu);
  return rec;
}

RunRecord unmeasured_record(const Point& point, const std::string& status, const std::string& message,
                            const RankIdentity& me, bool on_gpu) {
  MeasureResult r;
  r.record.status = status;
  r.record.message = message;
  r.record.started_at = r.record.ended_at = iso_utc_now();
  return make_record(point, r, me, on_gpu);
}

}  // namespace ks
