#include "cluster/gang.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "cluster/worker_process.h"
#include "common/clock.h"
#include "kernels/nccl/collective.h"
#include "measure/do_bench.h"
#include "measure/protocol.h"

namespace ks {
namespace {

using Clock = std::chrono::steady_clock;
using namespace collective;

// Waits for MPI requests until the point's deadline; between tests, outside the timed calls, the
// rank's own duties. The memory the point's MPI operations read and write is the waiter's (scratch(),
// keep()): a wait that times out leaves its operation unfinished, MPI may write that memory long
// after, so it must outlive the point (GangCommunicators::abandon takes it).
class Waiter {
 public:
  Waiter(double timeout_s, const std::function<void()>& duties)
      : deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s))),
        timeout_s_(timeout_s),
        duties_(duties) {}

  // A value for an MPI operation to use, alive as long as the waiter (or, abandoned, the process).
  template <typename T> T& scratch(T initial) {
    auto kept = std::make_shared<T>(std::move(initial));
    memory_.push_back(kept);
    return *kept;
  }
  void keep(std::shared_ptr<void> memory) { memory_.push_back(std::move(memory)); }
  std::vector<std::shared_ptr<void>> memory() && { return std::move(memory_); }

  void wait(MPI_Request& request, const char* what, bool timed = false) {
    auto last_duty = Clock::now();
    for (int done = 0;;) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return;
      const auto now = Clock::now();
      if (now > deadline_)
        throw GangTimeout(
            fmt::format("the gang did not complete {} within the point's timeout of {:g} s (a member "
                        "stopped or is far behind)",
                        what, timeout_s_));
      if (!timed && duties_ && now - last_duty > std::chrono::milliseconds(1)) {
        duties_();
        last_duty = now;
      }
    }
  }

 private:
  Clock::time_point deadline_;
  double timeout_s_;
  const std::function<void()>& duties_;
  std::vector<std::shared_ptr<void>> memory_;
};

// One member's buffers and calls of a point's collective.
class GangCollective {
 public:
  GangCollective(const CollectiveSpec& spec, const Point& point, int members, int me, MPI_Comm comm)
      : spec_(spec), comm_(comm) {
    const Parameters params(point.params);
    setting_ = setting_of(spec, params, members, me);
    size_ = size_of(setting_.type);
    counts_ = counts_of(spec, params, members);
    if (counts_.param > static_cast<std::size_t>(INT_MAX))
      throw std::invalid_argument(
          fmt::format("bytes: {} elements a call is more than MPI's counts hold ({})", counts_.param, INT_MAX));
    const bool one_buffer = setting_.in_place || spec.mpi_one_buffer;
    recv_.resize(std::max(counts_.recv, one_buffer ? counts_.send : 0) * size_);
    if (!one_buffer) send_.resize(counts_.send * size_);
    type_ = mpi_type(setting_.type);
    op_ = mpi_op(setting_.op, setting_.type);
  }

  // Every member's input written afresh, its receive buffer cleared to a value no result holds.
  void write_inputs() {
    for (std::size_t i = 0; i < recv_.size() / size_; ++i) write_element(recv_.data(), i, setting_.type, -1);
    if (spec_.mpi_one_buffer && setting_.me != setting_.root) return;
    unsigned char* input =
        send_.empty() ? recv_.data() + counts_.send_in_place_offset * size_ * setting_.me : send_.data();
    if (spec_.mpi_one_buffer) input = recv_.data();
    for (std::size_t i = 0; i < counts_.send; ++i)
      write_element(input, i, setting_.type, input_value(i, setting_.me, setting_));
  }

  void call(Waiter& waiter, bool timed) {
    MpiCall call{send_.empty() ? nullptr : send_.data(), recv_.data(), counts_, type_, op_, setting_.root, comm_};
    MPI_Request request;
    spec_.start_mpi(call, &request);
    waiter.wait(request, spec_.name.c_str(), timed);
    if (setting_.reduction && setting_.op == ReduceOp::avg)
      divide_elements(recv_.data(), counts_.recv, setting_.type, setting_.members);
  }

  // The received elements that differ from the expected ones, and the first of them in words.
  std::int64_t wrong_elements(std::string& first) const {
    return count_wrong_elements(spec_, counts_, setting_, recv_.data(), first);
  }

  double algorithm_bytes() const { return spec_.algorithm_bytes(counts_, size_, setting_.members); }
  double bus_factor() const { return spec_.bus_factor(setting_.members); }
  std::size_t received() const { return counts_.recv; }

 private:
  const CollectiveSpec& spec_;
  MPI_Comm comm_;
  Setting setting_;
  std::size_t size_ = 1;
  Counts counts_;
  std::vector<unsigned char> send_, recv_;
  MPI_Datatype type_;
  MPI_Op op_;
};

void barrier(MPI_Comm comm, Waiter& waiter) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  waiter.wait(request, "a barrier");
}

// Steps 1 to 4 of gang.h: the samples, each the slowest member's, on the gang's first member.
Timing time_collective(GangCollective& collective, const Protocol& protocol, MPI_Comm comm, int me, Waiter& waiter) {
  collective.write_inputs();
  barrier(comm, waiter);
  const auto estimate_start = Clock::now();
  for (int i = 0; i < 5; ++i) collective.call(waiter, true);
  double& estimate_ms =
      waiter.scratch(std::chrono::duration<double, std::milli>(Clock::now() - estimate_start).count() / 5);
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, &estimate_ms, 1, MPI_DOUBLE, MPI_MAX, comm, &request);
  waiter.wait(request, "the estimate");
  Timing timing = repetition_counts(estimate_ms, protocol);
  for (std::int64_t i = 0; i < timing.n_warmup; ++i) collective.call(waiter, true);
  timing.samples_ns.resize(static_cast<std::size_t>(timing.n_repeat));
  for (double& sample : timing.samples_ns) {
    barrier(comm, waiter);
    const auto start = Clock::now();
    collective.call(waiter, true);
    sample = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  }
  std::vector<double>& samples = waiter.scratch(std::move(timing.samples_ns));
  MPI_Ireduce(me == 0 ? MPI_IN_PLACE : samples.data(), samples.data(), static_cast<int>(samples.size()), MPI_DOUBLE,
              MPI_MAX, 0, comm, &request);
  waiter.wait(request, "the samples");
  timing.samples_ns = samples;
  return timing;
}

// Step 5: the wrong elements over the gang, on its first member; `detail` says what was found.
std::int64_t check_collective(GangCollective& collective, MPI_Comm comm, int me, Waiter& waiter, std::string& detail) {
  collective.write_inputs();
  barrier(comm, waiter);
  collective.call(waiter, false);
  std::string first;
  std::int64_t& wrong = waiter.scratch(collective.wrong_elements(first));
  const std::int64_t mine = wrong;
  MPI_Request request;
  MPI_Ireduce(me == 0 ? MPI_IN_PLACE : &wrong, &wrong, 1, MPI_INT64_T, MPI_SUM, 0, comm, &request);
  waiter.wait(request, "the check");
  if (wrong == 0) detail = fmt::format("every member received the {} elements expected", collective.received());
  else
    detail = fmt::format("{} wrong elements over the gang{}", wrong,
                         mine > 0 ? fmt::format(" (on its first member, {})", first) : std::string());
  return wrong;
}

// Outcomes in the order the gang reports the worst of them.
constexpr std::array<const char*, 4> kOutcomes{"passed", "error", "crashed", "timeout"};

int outcome_of(const std::string& status) {
  if (status == "passed" || status == "failed") return 0;
  for (std::size_t i = 1; i < kOutcomes.size(); ++i)
    if (status == kOutcomes[i]) return static_cast<int>(i);
  return 1;
}

// Step 1 of the nccl path: the NCCL id every worker makes the gang's communicator with, or empty when
// every worker keeps one already. Every member calls it.
std::string agree_on_nccl_id(const std::vector<int>& members, int me, MPI_Comm comm, Workers& workers, Waiter& waiter) {
  int& all_keep = waiter.scratch(workers.keeps_nccl_communicator(members) ? 1 : 0);
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, &all_keep, 1, MPI_INT, MPI_MIN, comm, &request);
  waiter.wait(request, "the agreement on NCCL communicators");
  if (all_keep) return "";
  // The first member's id, or why it has none: a fixed-size message, the first byte saying which.
  std::array<char, 1024>& message = waiter.scratch(std::array<char, 1024>{});
  if (me == 0) {
    std::string text;
    try {
      text = fmt::format("i{}", workers.new_nccl_id());
    } catch (const std::exception& e) { text = fmt::format("e{}", e.what()); }
    text.copy(message.data(), message.size() - 1);
  }
  MPI_Ibcast(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, comm, &request);
  waiter.wait(request, "the NCCL id");
  const std::string text(message.data());
  if (text.empty() || text.front() != 'i')
    throw std::runtime_error("the gang's first member could not make an NCCL id: " +
                             (text.empty() ? "" : text.substr(1)));
  return text.substr(1);
}

// Step 2: this member's worker measures, while the rank keeps up its duties.
MeasureResult measure_in_worker(const MeasureRequest& request, Workers& workers, const std::function<void()>& duties) {
  workers.begin(request);
  for (;;) {
    if (auto result = workers.poll(std::chrono::milliseconds(1))) return *result;
    if (duties) duties();
  }
}

// Step 3: the members' outcomes on the first one. `result` is this member's, the gang's on return.
void gather_outcome(MeasureResult& result, const CollectiveSpec& spec, int members, int me, MPI_Comm comm,
                    Waiter& waiter) {
  RunRecord& record = result.record;
  // The worst outcome, and whether every member made as many repetitions as the others.
  const auto repetitions = static_cast<long long>(record.samples_ns.size());
  std::array<long long, 3>& agreed =
      waiter.scratch(std::array<long long, 3>{outcome_of(record.status), repetitions, -repetitions});
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, agreed.data(), 3, MPI_LONG_LONG, MPI_MAX, comm, &request);
  waiter.wait(request, "the members' outcomes");
  if (agreed[0] != 0) {
    if (me == 0 && outcome_of(record.status) == 0) {
      const std::string started_at = record.started_at;
      record = RunRecord{};
      record.started_at = started_at;
      record.status = kOutcomes[static_cast<std::size_t>(agreed[0])];
      record.message = fmt::format("another member of the gang ended the point with {}", record.status);
    }
    return;
  }
  if (agreed[1] != -agreed[2]) throw std::runtime_error("the gang's members made different numbers of repetitions");
  std::vector<double>& samples = waiter.scratch(std::move(record.samples_ns));
  MPI_Ireduce(me == 0 ? MPI_IN_PLACE : samples.data(), samples.data(), static_cast<int>(repetitions), MPI_DOUBLE,
              MPI_MAX, 0, comm, &request);
  waiter.wait(request, "the samples");
  record.samples_ns = samples;
  std::int64_t& wrong = waiter.scratch(std::max<std::int64_t>(record.wrong_elements, 0));
  const std::int64_t mine = wrong;
  MPI_Ireduce(me == 0 ? MPI_IN_PLACE : &wrong, &wrong, 1, MPI_INT64_T, MPI_SUM, 0, comm, &request);
  waiter.wait(request, "the check");
  if (me != 0) return;
  summarize_collective(record, spec.bus_factor(members));
  if (record.wrong_elements < 0) return;  // not checked
  record.wrong_elements = wrong;
  record.status = wrong > 0 ? "failed" : "passed";
  record.message = wrong == 0 ? std::string("every member received the elements expected")
                              : fmt::format("{} wrong elements over the gang{}", wrong,
                                            mine > 0 ? fmt::format(" (on its first member: {})", record.message) : "");
}

// The nccl path of measure_in_gang, steps 1 to 3 of gang.h's second part.
MeasureResult measure_on_gpus(const CollectiveSpec& spec, const Point& point, const std::vector<int>& members, int me,
                              bool check, const ProtocolSpec& protocol, MPI_Comm comm, Workers& workers, Waiter& waiter,
                              const std::function<void()>& duties) {
  MeasureRequest request{point, protocol, check, GangSeat{members, me, "", point.timeout_s}};
  request.gang->nccl_id = agree_on_nccl_id(members, me, comm, workers, waiter);
  MeasureResult result = measure_in_worker(request, workers, duties);
  workers.note_nccl_communicator(members, outcome_of(result.record.status) == 0 && !result.worker_exits);
  gather_outcome(result, spec, static_cast<int>(members.size()), me, comm, waiter);
  return result;
}

}  // namespace

void summarize_collective(RunRecord& record, double bus_factor) {
  record.stats = summarize(record.samples_ns);
  record.bus_gbps = record.bytes / record.stats.median_ns * bus_factor;
}

void record_collective_timing(RunRecord& record, Timing timing, double algorithm_bytes, double bus_factor) {
  record.n_warmup = timing.n_warmup;
  record.n_repeat = timing.n_repeat;
  record.samples_ns = std::move(timing.samples_ns);
  record.flops = 0;
  record.bytes = algorithm_bytes;
  summarize_collective(record, bus_factor);
}

std::optional<MeasureResult> measure_in_gang(const Point& point, const std::vector<int>& members,
                                             std::uint32_t generation, bool check, const ProtocolSpec& protocol_spec,
                                             GangCommunicators& communicators, Workers& workers,
                                             const std::function<void()>& while_waiting) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const int me = static_cast<int>(std::find(members.begin(), members.end(), world_rank) - members.begin());
  MeasureResult result;
  RunRecord& record = result.record;
  record.started_at = iso_utc_now();
  try {
    const CollectiveSpec* spec = find_collective(point.kernel);
    if (!spec) throw std::invalid_argument(point.kernel + " is not a collective");
    const MPI_Comm comm = communicators.of(members, generation);
    if (comm == MPI_COMM_NULL) {  // the other members time out on it, and tell rank 0 so too
      record.status = "timeout";
      record.message =
          "not measured: an earlier point of this gang timed out on this member, which lost the gang's "
          "communicator (the gang's next points get a new one)";
      record.ended_at = iso_utc_now();
      if (me != 0) return std::nullopt;
      return result;
    }
    if (transport_of(point.implementation) != Transport::mpi) {
      // The worker's own deadline ends the point (it aborts its communicator); the ranks' waits on
      // each other allow for that as the worker process's does.
      Waiter waiter(point.timeout_s + WorkerProcess::kGangAbortGrace_s, while_waiting);
      try {
        result = measure_on_gpus(*spec, point, members, me, check, protocol_spec, comm, workers, waiter, while_waiting);
      } catch (const GangTimeout& e) {
        communicators.abandon(members, std::move(waiter).memory());
        workers.note_nccl_communicator(members, false);
        record.status = "timeout";
        record.message = e.what();
        record.ended_at = iso_utc_now();
      }
      if (me != 0) return std::nullopt;
      return result;
    }
    Protocol protocol = resolve_protocol(protocol_spec, Backend::cpu);
    protocol.flush_bytes = 0;  // nccl-tests times without a flush
    result.protocol = protocol_to_json(protocol);
    if (protocol.name != "do_bench")
      throw std::invalid_argument(
          fmt::format("protocol {}: collectives are timed with do_bench's loop only", protocol.name));
    Waiter waiter(point.timeout_s, while_waiting);
    const auto collective = std::make_shared<GangCollective>(*spec, point, static_cast<int>(members.size()), me, comm);
    waiter.keep(collective);  // its buffers are the calls'
    try {
      Timing timing = time_collective(*collective, protocol, comm, me, waiter);
      record.status = "passed";
      if (check) {
        record.wrong_elements = check_collective(*collective, comm, me, waiter, record.message);
        if (record.wrong_elements > 0) record.status = "failed";
      }
      record_collective_timing(record, std::move(timing), collective->algorithm_bytes(), collective->bus_factor());
    } catch (const GangTimeout& e) {
      communicators.abandon(members, std::move(waiter).memory());
      const std::string started_at = record.started_at;
      record = RunRecord{};
      record.started_at = started_at;
      record.status = "timeout";
      record.message = e.what();
    }
  } catch (const std::exception& e) {
    record.status = "error";
    record.message = e.what();
  }
  record.ended_at = iso_utc_now();
  if (me != 0) return std::nullopt;
  return result;
}

}  // namespace ks
