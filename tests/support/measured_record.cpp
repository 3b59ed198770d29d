#include "support/measured_record.h"

#include <limits>

namespace ks::testing {

RunRecord cold_gpu_record() {
  RunRecord record;
  record.started_at = "2026-12-03T10:00:00.250Z";
  record.ended_at = "2026-12-03T10:00:01.750Z";
  record.n_warmup = 5;
  record.n_repeat = 3;
  record.stats = {8.3e6, 8.1e6, 8.9e6, 8.4e6, 7.9e6, 9.5e6, 1.2e5};
  record.device_peak_bytes = 4563402752;
  record.samples_ns = {8.3e6, 7.9e6, 9.5e6};
  record.gpu_start = {1980, 3201, 402.5, 39, 1};
  record.gpu_end = {1635, 3201, 699.75, 52, 4};
  record.noise = {0.004, 1, 7};
  record.sample_sm_clock_mhz = {1757, std::numeric_limits<double>::quiet_NaN(), 1804};
  return record;
}

}  // namespace ks::testing
