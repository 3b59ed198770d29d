// CUDA event marks, the L2 flush, the cold protocol's hold and clock reads, and the graph protocol's
// capture (compiled only when CUDA is on).
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/timer.h"

namespace ks {
namespace {

void check_cuda(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess)
    throw std::runtime_error("do_bench: " + what + " failed: " + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status));
}

// One flush buffer per process (a worker owns one GPU), allocated on the current device at the first
// flush and kept for every later point; only a larger flush size replaces it.
void* flush_buffer(std::size_t bytes) {
  static void* buffer = nullptr;
  static std::size_t allocated = 0;
  if (allocated < bytes) {
    if (buffer) check_cuda(cudaFree(buffer), "freeing the smaller flush buffer");
    buffer = nullptr;
    allocated = 0;
    check_cuda(cudaMalloc(&buffer, bytes), "allocating the " + std::to_string(bytes) + "-byte flush buffer");
    allocated = bytes;
  }
  return buffer;
}

// How long a hold waits for its release before it lets the stream go anyway: a host that died or
// stalled between hold() and release() must not leave the GPU spinning.
constexpr unsigned long long kHoldTimeoutNs = 10'000'000'000ULL;
// A clock read over less time than this is not read: the global timer ticks in steps of up to a
// microsecond on some GPUs, which would make a short interval's clock wrong by 10% or more.
constexpr unsigned long long kShortestClockIntervalNs = 10'000;

__device__ unsigned long long global_timer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// The cold protocol's hold: spins until the host sets *released (or the timeout passes).
__global__ void hold_stream(const volatile int* released) {
  const unsigned long long start = global_timer_ns();
  while (*released == 0 && global_timer_ns() - start < kHoldTimeoutNs) {}
}

// Writes the global timer and SM 0's cycle counter. Launched with one block per SM, so that one lands
// on SM 0: the cycle counters of different SMs are not one clock, so both reads of a pair come from
// the same SM.
__global__ void read_sm0_clock(unsigned long long* global_ns_and_cycles) {
  unsigned int sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (sm != 0) return;
  global_ns_and_cycles[0] = global_timer_ns();
  global_ns_and_cycles[1] = clock64();
}

int current_device() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "reading the current device");
  return device;
}

int device_attribute(cudaDeviceAttr attribute, const char* what) {
  int value = 0;
  check_cuda(cudaDeviceGetAttribute(&value, attribute, current_device()), std::string("reading the device's ") + what);
  return value;
}

class CudaEventTimer final : public BenchTimer {
 public:
  CudaEventTimer(void* stream, std::int64_t flush_bytes)
      : stream_(static_cast<cudaStream_t>(stream)), flush_bytes_(flush_bytes > 0 ? flush_bytes : 0) {
    if (flush_bytes_ > 0) flush_buffer(flush_bytes_);  // allocate before anything is timed
  }

  ~CudaEventTimer() override {  // a destructor must not throw: errors here are ignored
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
    if (graph_) cudaGraphExecDestroy(graph_);
    if (released_) cudaFreeHost(released_);
    if (clock_reads_) cudaFree(clock_reads_);
  }

  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void reserve_marks(std::size_t count) override {
    while (events_.size() < count) {
      cudaEvent_t event = nullptr;
      check_cuda(cudaEventCreate(&event), "creating timing event " + std::to_string(events_.size()));
      events_.push_back(event);
    }
  }

  void record(std::size_t mark) override {
    check_cuda(cudaEventRecord(events_.at(mark), stream_), "recording timing event " + std::to_string(mark));
  }

  void flush() override {
    if (flush_bytes_ == 0) return;
    check_cuda(cudaMemsetAsync(flush_buffer(flush_bytes_), 0, flush_bytes_, stream_),
               "zeroing the " + std::to_string(flush_bytes_) + "-byte flush buffer");
  }

  void synchronize() override {
    // As torch.cuda.synchronize() in Triton: the whole device, so a kernel's error surfaces here.
    check_cuda(cudaDeviceSynchronize(), "synchronising the device after the timed calls");
  }

  double elapsed_ns(std::size_t from, std::size_t to) const override {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, events_.at(from), events_.at(to)),
               "reading the time between events " + std::to_string(from) + " and " + std::to_string(to));
    return static_cast<double>(ms) * 1e6;
  }

  void hold() override {
    if (!released_) {
      check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&released_), sizeof(int), cudaHostAllocMapped),
                 "allocating the hold's host flag");
      check_cuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&released_on_device_), released_, 0),
                 "mapping the hold's host flag");
    }
    std::atomic_ref<int>(*released_).store(0, std::memory_order_release);
    hold_stream<<<1, 1, 0, stream_>>>(released_on_device_);
    check_cuda(cudaGetLastError(), "launching the hold kernel");
  }

  void release() override {
    if (released_) std::atomic_ref<int>(*released_).store(1, std::memory_order_release);
  }

  void reserve_clocks(std::size_t count) override {
    if (sm_count_ == 0) sm_count_ = device_attribute(cudaDevAttrMultiProcessorCount, "SM count");
    if (count > clock_slots_) {
      if (clock_reads_) check_cuda(cudaFree(clock_reads_), "freeing the smaller clock reads");
      clock_reads_ = nullptr;
      clock_slots_ = 0;
      check_cuda(cudaMalloc(&clock_reads_, count * kWordsPerClock * sizeof(unsigned long long)),
                 "allocating the clock reads");
      clock_slots_ = count;
    }
    // Zeroed once, before the samples (not one more launch per sample), so that a read no block made
    // on SM 0 shows as missing rather than as an old one.
    check_cuda(cudaMemsetAsync(clock_reads_, 0, count * kWordsPerClock * sizeof(unsigned long long), stream_),
               "zeroing the clock reads");
  }

  void start_clock(std::size_t clock) override { launch_clock_read(clock * kWordsPerClock); }

  void stop_clock(std::size_t clock) override { launch_clock_read(clock * kWordsPerClock + 2); }

  std::vector<double> sm_clocks_mhz(std::size_t count) const override {
    std::vector<unsigned long long> reads(count * kWordsPerClock);
    std::vector<double> mhz(count, std::numeric_limits<double>::quiet_NaN());
    if (count == 0) return mhz;
    check_cuda(
        cudaMemcpy(reads.data(), clock_reads_, reads.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
        "copying the clock reads");
    for (std::size_t i = 0; i < count; ++i) {
      const unsigned long long* r = &reads[i * kWordsPerClock];
      const bool read = r[0] != 0 && r[2] > r[0] + kShortestClockIntervalNs && r[3] > r[1];
      if (read) mhz[i] = static_cast<double>(r[3] - r[1]) / static_cast<double>(r[2] - r[0]) * 1e3;
    }
    return mhz;
  }

  double default_sm_clock_mhz() const override { return device_attribute(cudaDevAttrClockRate, "peak SM clock") / 1e3; }

  void capture(const std::function<void()>& calls) override {
    drop_graph();
    check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
               "starting the capture of the calls into a CUDA graph (the implementation's stream cannot be the "
               "legacy default stream)");
    try {
      calls();
    } catch (...) {
      cudaGraph_t partial = nullptr;
      cudaStreamEndCapture(stream_, &partial);
      if (partial) cudaGraphDestroy(partial);
      throw;
    }
    cudaGraph_t graph = nullptr;
    check_cuda(cudaStreamEndCapture(stream_, &graph),
               "capturing the calls into a CUDA graph (a call that synchronises, allocates, or works on a stream "
               "not joined to its own cannot be captured)");
    const cudaError_t made = cudaGraphInstantiate(&graph_, graph, 0);
    cudaGraphDestroy(graph);
    check_cuda(made, "instantiating the captured CUDA graph");
  }

  void replay() override { check_cuda(cudaGraphLaunch(graph_, stream_), "launching the captured CUDA graph"); }

 private:
  static constexpr std::size_t kWordsPerClock = 4;  // global ns and SM 0 cycles, at the start and the stop

  void launch_clock_read(std::size_t offset) {
    read_sm0_clock<<<sm_count_, 1, 0, stream_>>>(clock_reads_ + offset);
    check_cuda(cudaGetLastError(), "launching the clock read");
  }

  void drop_graph() {
    if (graph_) check_cuda(cudaGraphExecDestroy(graph_), "destroying the last captured graph");
    graph_ = nullptr;
  }

  cudaStream_t stream_;
  std::size_t flush_bytes_;
  std::vector<cudaEvent_t> events_;
  int* released_ = nullptr;  // host memory the hold kernel reads through released_on_device_
  int* released_on_device_ = nullptr;
  unsigned long long* clock_reads_ = nullptr;  // kWordsPerClock words per clock
  std::size_t clock_slots_ = 0;
  int sm_count_ = 0;
  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace

std::unique_ptr<BenchTimer> make_cuda_event_timer(void* stream, std::int64_t flush_bytes) {
  return std::make_unique<CudaEventTimer>(stream, flush_bytes);
}

std::int64_t gpu_l2_cache_bytes() { return device_attribute(cudaDevAttrL2CacheSize, "L2 cache size"); }

}  // namespace ks
