// CUDA event marks and the L2 flush of the do_bench protocol (compiled only when CUDA is on).
#include <cuda_runtime.h>

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

class CudaEventTimer final : public BenchTimer {
 public:
  CudaEventTimer(void* stream, std::int64_t flush_bytes)
      : stream_(static_cast<cudaStream_t>(stream)), flush_bytes_(flush_bytes > 0 ? flush_bytes : 0) {
    if (flush_bytes_ > 0) flush_buffer(flush_bytes_);  // allocate before anything is timed
  }

  ~CudaEventTimer() override {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);  // a destructor must not throw
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

 private:
  cudaStream_t stream_;
  std::size_t flush_bytes_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

std::unique_ptr<BenchTimer> make_cuda_event_timer(void* stream, std::int64_t flush_bytes) {
  return std::make_unique<CudaEventTimer>(stream, flush_bytes);
}

}  // namespace ks
