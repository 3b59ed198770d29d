#include "cluster/nccl_member.h"

#include <stdexcept>

#include "common/clock.h"

#ifdef KERNELSWEEP_HAVE_NCCL
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "cluster/gang.h"
#include "common/digest.h"
#include "kernels/nccl/nccl_call.h"
#include "measure/do_bench.h"
#include "measure/protocol.h"
#endif

namespace ks {

#ifdef KERNELSWEEP_HAVE_NCCL
namespace {

using Clock = std::chrono::steady_clock;
using namespace collective;

class Deadline {
 public:
  explicit Deadline(double seconds)
      : at_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))),
        seconds_(seconds) {}
  void check(const char* what) const {
    if (Clock::now() > at_)
      throw GangTimeout(
          fmt::format("the gang did not complete {} within the point's timeout of {:g} s (a member "
                      "stopped, died or is far behind); the NCCL communicator was aborted",
                      what, seconds_));
  }

 private:
  Clock::time_point at_;
  double seconds_;
};

void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(error)));
}

double elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return ms;
}

std::string nccl_problem(ncclComm_t comm, ncclResult_t result, const char* what) {
  const char* last = comm ? ncclGetLastError(comm) : nullptr;
  return fmt::format("{}: {}{}{}", what, ncclGetErrorString(result), last && *last ? ": " : "", last ? last : "");
}

// A call on a non-blocking communicator may return ncclInProgress: its work is enqueued once the
// communicator's asynchronous error says so.
void settle(ncclComm_t comm, ncclResult_t result, const Deadline& deadline, const char* what) {
  while (result == ncclInProgress) {
    deadline.check(what);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    ncclCommGetAsyncError(comm, &result);
  }
  if (result != ncclSuccess) throw std::runtime_error(nccl_problem(comm, result, what));
}

// Waits for the stream's work, watching the communicator for errors and the point's deadline.
void wait_for(cudaStream_t stream, ncclComm_t comm, const Deadline& deadline, const char* what) {
  for (;;) {
    const cudaError_t state = cudaStreamQuery(stream);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) check_cuda(state, what);
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) throw std::runtime_error(nccl_problem(comm, async, what));
    deadline.check(what);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

ncclUniqueId from_hex(const std::string& hex) {
  ncclUniqueId id;
  if (hex.size() != 2 * sizeof id.internal)
    throw std::invalid_argument(fmt::format("an NCCL id of {} hex digits, not {}", hex.size(), 2 * sizeof id.internal));
  for (std::size_t i = 0; i < sizeof id.internal; ++i)
    id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return id;
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    void* data = nullptr;
    if (bytes > 0) check_cuda(cudaMalloc(&data, bytes), "cudaMalloc of a collective's buffer");
    data_.reset(static_cast<unsigned char*>(data));
  }
  unsigned char* data() const { return data_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<unsigned char, decltype(&cudaFree)> data_{nullptr, cudaFree};
  std::size_t bytes_;
};

class Events {
 public:
  explicit Events(std::size_t count) : events_(count) {
    for (cudaEvent_t& event : events_) check_cuda(cudaEventCreate(&event), "cudaEventCreate");
  }
  ~Events() {
    for (cudaEvent_t event : events_)
      if (event) cudaEventDestroy(event);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

// Calls enqueued between two waits: enough to keep the GPU busy, few enough that a launch never
// blocks on a full queue behind a collective that waits for a stopped member.
constexpr std::int64_t kCallsBetweenWaits = 256;

// One member's buffers, stream and calls of a point's collective.
class GpuCollective {
 public:
  // Allocates; waits for nothing (waits are for prepare() and on: a buffer freed while a collective
  // hangs would wait for it, so the communicator is aborted first).
  GpuCollective(const CollectiveSpec& spec, const Parameters& params, const GangSeat& seat, ncclComm_t comm,
                const Deadline& deadline)
      : spec_(spec),
        comm_(comm),
        deadline_(deadline),
        setting_(setting_of(spec, params, static_cast<int>(seat.members.size()), seat.me)),
        size_(size_of(setting_.type)),
        counts_(counts_of(spec, params, setting_.members)),
        recv_((setting_.in_place ? std::max(counts_.recv, counts_.send) : counts_.recv) * size_),
        send_(setting_.in_place ? 0 : counts_.send * size_) {
    if (!spec.start_nccl) throw std::runtime_error(spec.name + " has no NCCL call");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    call_ = {input(),       recv_.data(), counts_, nccl_type(setting_.type), nccl_op(setting_.op),
             setting_.root, comm,         stream_};
  }

  ~GpuCollective() {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (graph_) cudaGraphDestroy(graph_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  GpuCollective(const GpuCollective&) = delete;
  GpuCollective& operator=(const GpuCollective&) = delete;

  // Step 2's end: the inputs, one call (NCCL connects the gang's GPUs at the first call: not a call to
  // time or capture), and for a graph the capture.
  void prepare(bool graph) {
    write_inputs();
    launch_direct();
    wait("the first call");
    if (graph) capture();
  }

  // Steps 3 and 4 of nccl_member.h: this member's samples.
  Timing time(const Protocol& protocol) {
    Events marks(2);
    check_cuda(cudaEventRecord(marks[0], stream_), "cudaEventRecord");
    for (int i = 0; i < 5; ++i) launch();
    check_cuda(cudaEventRecord(marks[1], stream_), "cudaEventRecord");
    wait("the estimate's calls");
    Timing timing = repetition_counts(gang_largest(elapsed_ms(marks[0], marks[1]) / 5), protocol);
    for (std::int64_t i = 0; i < timing.n_warmup; ++i) {
      launch();
      if ((i + 1) % kCallsBetweenWaits == 0) wait("the warm-up calls");
    }
    const auto repeats = static_cast<std::size_t>(timing.n_repeat);
    Events starts(repeats), ends(repeats);
    // Separate start and end events: a wait between calls then never counts in a sample.
    for (std::size_t i = 0; i < repeats; ++i) {
      check_cuda(cudaEventRecord(starts[i], stream_), "cudaEventRecord");
      launch();
      check_cuda(cudaEventRecord(ends[i], stream_), "cudaEventRecord");
      if ((i + 1) % kCallsBetweenWaits == 0) wait("the timed calls");
    }
    wait("the timed calls");
    timing.samples_ns.resize(repeats);
    for (std::size_t i = 0; i < repeats; ++i) timing.samples_ns[i] = elapsed_ms(starts[i], ends[i]) * 1e6;
    return timing;
  }

  // Step 5: this member's wrong elements, and the first in words.
  std::int64_t check(std::string& first) {
    write_inputs();
    launch();
    wait("the checked call");
    std::vector<unsigned char> received(counts_.recv * size_);
    const unsigned char* result =
        recv_.data() + (setting_.in_place ? counts_.recv_in_place_offset * size_ * setting_.me : 0);
    check_cuda(cudaMemcpy(received.data(), result, received.size(), cudaMemcpyDeviceToHost),
               "cudaMemcpy of the result");
    return count_wrong_elements(spec_, counts_, setting_, received.data(), first);
  }

  double algorithm_bytes() const { return spec_.algorithm_bytes(counts_, size_, setting_.members); }
  double bus_factor() const { return spec_.bus_factor(setting_.members); }
  std::size_t received() const { return counts_.recv; }
  std::size_t device_bytes() const { return recv_.bytes() + send_.bytes(); }

 private:
  unsigned char* input() const {
    return setting_.in_place ? recv_.data() + counts_.send_in_place_offset * size_ * setting_.me : send_.data();
  }

  // The receive buffer set to all ones (NaN or -1: a value no result holds), then the input: a block
  // of whole periods written on the host, copied, and doubled on the device up to its length.
  void write_inputs() {
    check_cuda(cudaMemsetAsync(recv_.data(), 0xFF, recv_.bytes(), stream_), "cudaMemsetAsync");
    const std::size_t period = input_period(setting_);
    const std::size_t block = std::min(counts_.send, period * std::max<std::size_t>(1, (1 << 16) / period));
    std::vector<unsigned char> host(block * size_);
    for (std::size_t i = 0; i < block; ++i)
      write_element(host.data(), i, setting_.type, input_value(i, setting_.me, setting_));
    unsigned char* to = input();
    check_cuda(cudaMemcpyAsync(to, host.data(), host.size(), cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    for (std::size_t written = block; written < counts_.send;) {  // `written` stays a multiple of the period
      const std::size_t more = std::min(written, counts_.send - written);
      check_cuda(cudaMemcpyAsync(to + written * size_, to, more * size_, cudaMemcpyDeviceToDevice, stream_),
                 "cudaMemcpyAsync");
      written += more;
    }
    wait("writing the inputs");
  }

  void launch_direct() {
    settle(comm_, static_cast<ncclResult_t>(spec_.start_nccl(call_)), deadline_, spec_.name.c_str());
  }

  void launch() {
    if (graph_exec_) check_cuda(cudaGraphLaunch(graph_exec_, stream_), "cudaGraphLaunch");
    else launch_direct();
  }

  void capture() {
    check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    launch_direct();
    check_cuda(cudaStreamEndCapture(stream_, &graph_), "cudaStreamEndCapture");
    check_cuda(cudaGraphInstantiate(&graph_exec_, graph_, 0), "cudaGraphInstantiate");
  }

  void wait(const char* what) { wait_for(stream_, comm_, deadline_, what); }

  // The largest of the members' estimates, through the gang's own communicator.
  double gang_largest(double estimate_ms) {
    float host = static_cast<float>(estimate_ms);
    check_cuda(cudaMemcpyAsync(estimate_.data(), &host, sizeof host, cudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync");
    settle(comm_, ncclAllReduce(estimate_.data(), estimate_.data(), 1, ncclFloat32, ncclMax, comm_, stream_), deadline_,
           "the estimate's all-reduce");
    check_cuda(cudaMemcpyAsync(&host, estimate_.data(), sizeof host, cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync");
    wait("the estimate's all-reduce");
    return host;
  }

  const CollectiveSpec& spec_;
  ncclComm_t comm_;
  const Deadline& deadline_;
  Setting setting_;
  std::size_t size_;
  Counts counts_;
  DeviceBuffer recv_, send_;
  DeviceBuffer estimate_{sizeof(float)};
  cudaStream_t stream_ = nullptr;
  NcclCall call_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace

// The communicators this worker keeps, by the gang's members.
struct NcclMember::Communicators {
  std::map<std::vector<int>, ncclComm_t> made;

  ~Communicators() {
    for (auto& [members, comm] : made) ncclCommDestroy(comm);
  }

  ncclComm_t of(const GangSeat& seat, const Deadline& deadline) {
    if (seat.nccl_id.empty()) {
      const auto found = made.find(seat.members);
      if (found == made.end())
        throw std::runtime_error("no NCCL communicator is kept for this gang, and no id came to make one");
      return found->second;
    }
    abort(seat.members);  // an id comes when any member lacks the communicator: all make it anew
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // the wait for the other members is ours, with the point's deadline
    ncclComm_t comm = nullptr;
    const ncclResult_t started =
        ncclCommInitRankConfig(&comm, static_cast<int>(seat.members.size()), from_hex(seat.nccl_id), seat.me, &config);
    try {
      settle(comm, started, deadline, "ncclCommInitRankConfig");
    } catch (...) {
      if (comm) ncclCommAbort(comm);
      throw;
    }
    made[seat.members] = comm;
    return comm;
  }

  void abort(const std::vector<int>& members) {
    const auto found = made.find(members);
    if (found == made.end()) return;
    ncclCommAbort(found->second);
    made.erase(found);
  }
};

NcclMember::NcclMember() : communicators_(std::make_unique<Communicators>()) {}
NcclMember::~NcclMember() = default;

std::string NcclMember::new_unique_id() {
  ncclUniqueId id;
  const ncclResult_t result = ncclGetUniqueId(&id);
  if (result != ncclSuccess) throw std::runtime_error(nccl_problem(nullptr, result, "ncclGetUniqueId"));
  return hex_of(std::span(reinterpret_cast<const unsigned char*>(id.internal), sizeof id.internal));
}

MeasureResult NcclMember::measure(const MeasureRequest& request) {
  MeasureResult result;
  RunRecord& record = result.record;
  record.started_at = iso_utc_now();
  const GangSeat& seat = *request.gang;
  const Deadline deadline(seat.timeout_s);
  try {
    const CollectiveSpec* spec = find_collective(request.point.kernel);
    if (!spec) throw std::invalid_argument(request.point.kernel + " is not a collective");
    Protocol protocol = resolve_protocol(request.protocol, Backend::cuda);
    protocol.flush_bytes = 0;  // nccl-tests times without a flush
    result.protocol = protocol_to_json(protocol);
    if (protocol.name != "do_bench")
      throw std::invalid_argument(
          fmt::format("protocol {}: collectives are timed with do_bench's loop only", protocol.name));
    std::unique_ptr<GpuCollective> collective;
    try {
      const ncclComm_t comm = communicators_->of(seat, deadline);
      collective = std::make_unique<GpuCollective>(*spec, Parameters(request.point.params), seat, comm, deadline);
      collective->prepare(transport_of(request.point.implementation) == Transport::nccl_graph);
      Timing timing = collective->time(protocol);
      record.status = "passed";
      if (request.check) {
        std::string first;
        record.wrong_elements = collective->check(first);
        record.message = record.wrong_elements == 0
                             ? fmt::format("this member received the {} elements expected", collective->received())
                             : fmt::format("{} wrong elements on this member ({})", record.wrong_elements, first);
        if (record.wrong_elements > 0) record.status = "failed";
      }
      record_collective_timing(record, std::move(timing), collective->algorithm_bytes(), collective->bus_factor());
      record.device_peak_bytes = collective->device_bytes();
    } catch (const GangTimeout& e) {
      communicators_->abort(seat.members);  // before the buffers go: the aborted kernels let go of them
      collective.reset();
      const std::string started_at = record.started_at;
      record = RunRecord{};
      record.started_at = started_at;
      record.status = "timeout";
      record.message = e.what();
      result.worker_exits = true;  // a fresh CUDA context for the next point
    } catch (const std::exception&) {
      communicators_->abort(seat.members);
      collective.reset();
      result.worker_exits = true;
      throw;
    }
  } catch (const std::exception& e) {
    record.status = "error";
    record.message = e.what();
  }
  record.ended_at = iso_utc_now();
  return result;
}

#else  // built without NCCL

struct NcclMember::Communicators {};
NcclMember::NcclMember() = default;
NcclMember::~NcclMember() = default;

std::string NcclMember::new_unique_id() { throw std::runtime_error("kernelsweep was built without NCCL"); }

MeasureResult NcclMember::measure(const MeasureRequest&) {
  MeasureResult result;
  result.record.started_at = result.record.ended_at = iso_utc_now();
  result.record.status = "error";
  result.record.message = "kernelsweep was built without NCCL: the nccl implementations of the collectives need it";
  return result;
}

#endif

}  // namespace ks
