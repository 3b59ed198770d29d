// What the GPU-state record costs a point: the time of GpuStateReader::read() (NVML's clocks,
// power, temperature and clock event reasons), which a GPU point makes twice, outside its timed
// repetitions. Prints the mean and the spread of many reads, and one reading.
//
//   build/bench/bench_gpu_state_read GPU-UUID [READS]      (nvidia-smi --query-gpu=uuid --format=csv,noheader)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "measure/gpu_state.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GPU-UUID [READS]\n", argv[0]);
    return 2;
  }
  const int reads = argc > 2 ? std::stoi(argv[2]) : 10000;
  std::string why_not;
  const auto reader = ks::GpuStateReader::open(argv[1], why_not);
  if (!reader) {
    std::fprintf(stderr, "no reader: %s\n", why_not.c_str());
    return 1;
  }
  const ks::GpuState state = reader->read();
  std::printf("reading: SM %.0f MHz, memory %.0f MHz, %.1f W, %.0f C, reasons %#llx (%s)\n", state.sm_clock_mhz,
              state.memory_clock_mhz, state.power_w, state.temperature_c,
              static_cast<unsigned long long>(state.throttle_reasons),
              ks::throttle_reason_names(state.throttle_reasons).c_str());
  std::vector<double> us(static_cast<std::size_t>(reads));
  for (double& t : us) {
    const auto start = std::chrono::steady_clock::now();
    (void)reader->read();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  std::sort(us.begin(), us.end());
  double total = 0;
  for (double t : us) total += t;
  std::printf(
      "read(): %d reads, mean %.2f us, median %.2f us, p99 %.2f us, max %.2f us; a point reads twice: %.3f ms\n", reads,
      total / reads, us[us.size() / 2], us[us.size() * 99 / 100], us.back(), 2 * total / reads / 1e3);
  return 0;
}
