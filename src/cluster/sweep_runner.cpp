#include "cluster/sweep_runner.h"

#include <algorithm>
#include <list>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "cluster/interruption.h"
#include "cluster/worker_process.h"
#include "common/canonical_json.h"
#include "common/clock.h"
#include "common/digest.h"

namespace ks {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr int kTagRequest = 101;  // rank -> 0: give me work
constexpr int kTagAssign = 102;   // 0 -> rank: group indices (none: no more work)
constexpr int kTagResult = 103;   // rank -> 0: one record

bool needs_gpu(const Registry& registry, const Point& point) {
  const KernelSpec* kernel = registry.find(point.kernel);
  const ImplementationSpec* implementation = kernel ? kernel->implementation(point.implementation) : nullptr;
  return implementation && implementation->backend == Backend::cuda;
}

// Which points start a group: the first mode of each shape, where CheckPolicy::first_mode checks.
std::vector<bool> group_starts(const Plan& plan) {
  std::vector<bool> starts(plan.points.size(), false);
  for (const auto& group : plan.groups) starts[group.first] = true;
  return starts;
}

// The worker's measurement completed with the point and where it ran: the record as it stays.
RunRecord make_record(const Point& point, const MeasureResult& r, const RankIdentity& me, bool on_gpu) {
  RunRecord rec = r.record;
  rec.point_id = point.id;
  rec.kernel = point.kernel;
  rec.implementation = point.implementation;
  rec.mode = point.mode;
  rec.params_json = canonical_json(point.params);
  rec.rank = me.rank;
  rec.host = me.host.hostname;
  if (on_gpu) rec.gpu_uuid = me.gpu.uuid;
  if (rec.stats.median_ns > 0) {
    rec.tflops = rec.flops / rec.stats.median_ns / 1e3;  // FLOP per ns = GFLOP/s
    rec.gbps = rec.bytes / rec.stats.median_ns;          // bytes per ns = GB/s
  }
  return rec;
}

RunRecord skipped_record(const Point& point, const std::string& reason) {
  MeasureResult r;
  r.record.status = "skipped";
  r.record.message = reason;
  r.record.started_at = r.record.ended_at = iso_utc_now();
  RankIdentity nobody;
  return make_record(point, r, nobody, false);
}

std::vector<bool> points_needing_gpu(const Registry& registry, const Plan& plan) {
  std::vector<bool> out;
  out.reserve(plan.points.size());
  for (const Point& p : plan.points) out.push_back(needs_gpu(registry, p));
  return out;
}

std::vector<std::size_t> points_of(const Plan& plan, const std::vector<std::size_t>& groups) {
  std::vector<std::size_t> out;
  for (std::size_t g : groups)
    for (std::size_t i = plan.groups[g].first; i < plan.groups[g].last; ++i) out.push_back(i);
  return out;
}

// Result messages in flight from a rank to rank 0; their buffers live until MPI is done with them.
class PendingSends {
 public:
  void send(std::string bytes, int tag) {
    auto& item = items_.emplace_back(std::move(bytes), MPI_REQUEST_NULL);
    MPI_Isend(item.first.data(), static_cast<int>(item.first.size()), MPI_CHAR, 0, tag, MPI_COMM_WORLD, &item.second);
  }
  void progress() {
    for (auto it = items_.begin(); it != items_.end();) {
      int done = 0;
      MPI_Test(&it->second, &done, MPI_STATUS_IGNORE);
      it = done ? items_.erase(it) : std::next(it);
    }
  }
  void wait_all() {
    while (!items_.empty()) {
      progress();
      if (!items_.empty()) std::this_thread::sleep_for(50us);
    }
  }

 private:
  std::list<std::pair<std::string, MPI_Request>> items_;
};

std::string encode_result(const RunRecord& record, const Json& protocol) {
  return Json{{"record", to_json(record)}, {"protocol", protocol}}.dump();
}

class Sweep {
 public:
  Sweep(const MpiWorld& world, const Plan& plan, const ProtocolSpec& protocol, const RunOptions& options)
      : world_(world), plan_(plan), protocol_(protocol), options_(options), group_starts_(group_starts(plan)),
        point_needs_gpu_(points_needing_gpu(*options.registry, plan)),
        worker_(options.executable, world.local_rank(), options.plugins) {}

  std::vector<RankIdentity> introduce();
  void run_root(const std::vector<std::size_t>& todo, const std::vector<RankIdentity>& ranks, ResultSink& sink);
  void run_other();
  void stop_worker() { worker_.stop(); }

 private:
  void check_plan_is_shared() const;
  void check_gpus_not_shared() const;
  void serve_requests(WorkQueue& queue, ResultSink& sink);
  std::vector<std::size_t> receive_assignment(PendingSends& sends);
  MeasureResult measure_other(std::size_t index, PendingSends& sends);
  MeasureRequest request_for(std::size_t index) const;
  RunRecord record_of(std::size_t index, const MeasureResult& result) const {
    return make_record(plan_.points[index], result, me_, point_needs_gpu_[index]);
  }

  const MpiWorld& world_;
  const Plan& plan_;
  const ProtocolSpec& protocol_;
  const RunOptions& options_;
  const std::vector<bool> group_starts_;
  const std::vector<bool> point_needs_gpu_;
  WorkerProcess worker_;
  RankIdentity me_;
  std::size_t received_ = 0;
  int ranks_finished_ = 0;
};

MeasureRequest Sweep::request_for(std::size_t index) const {
  const bool check = options_.check == CheckPolicy::every_mode ||
                     (options_.check == CheckPolicy::first_mode && group_starts_[index]);
  return {plan_.points[index], protocol_, check};
}

void Sweep::check_plan_is_shared() const {
  std::string ids;
  for (const Point& p : plan_.points) ids += p.id;
  const std::string mine = sha256_hex(ids);
  const std::string roots = world_.broadcast_from_root(mine);
  if (!world_.all(mine == roots))
    throw RunError("the ranks planned different sweeps (is the sweep file the same on every node?)");
}

void Sweep::check_gpus_not_shared() const {
  const auto uuids = world_.allgather_node(me_.gpu.uuid);
  std::string problem;
  for (int other = 0; other < static_cast<int>(uuids.size()); ++other)
    if (other != world_.local_rank() && !me_.gpu.uuid.empty() && uuids[other] == me_.gpu.uuid && problem.empty())
      problem = fmt::format("ranks share GPU {} on host {} ({} ranks on the node, {} GPUs visible to each): "
                            "start one rank per GPU, or pass --allow-shared-gpu",
                            me_.gpu.uuid, me_.host.hostname, world_.local_size(), me_.gpu_count);
  if (options_.allow_shared_gpu) problem.clear();
  const auto problems = world_.gather_to_root(problem);
  const bool ok = world_.all(problem.empty());
  if (ok) return;
  std::string first;
  for (const auto& p : problems)
    if (!p.empty()) { first = p; break; }
  throw RunError(first.empty() ? "ranks share a GPU" : first);
}

std::vector<RankIdentity> Sweep::introduce() {
  check_plan_is_shared();
  const Json hello = worker_.ensure_started();
  me_.rank = world_.rank();
  me_.local_rank = world_.local_rank();
  me_.gpu_count = hello.at("gpu_count").get<int>();
  me_.host = host_info_from_json(hello.at("host"));
  me_.host.mpi_version = MpiWorld::library_version();
  me_.gpu = gpu_info_from_json(hello.at("gpu"));
  me_.problem = hello.value("problem", "");
  check_gpus_not_shared();
  std::vector<RankIdentity> ranks;
  for (const auto& text : world_.gather_to_root(to_json(me_).dump()))
    ranks.push_back(rank_identity_from_json(Json::parse(text)));
  return ranks;
}

void Sweep::serve_requests(WorkQueue& queue, ResultSink& sink) {
  for (;;) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
    if (!waiting) return;
    if (status.MPI_TAG == kTagRequest) {
      MPI_Recv(nullptr, 0, MPI_BYTE, status.MPI_SOURCE, kTagRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const auto groups = queue.next(status.MPI_SOURCE);
      const std::vector<std::int64_t> payload(groups.begin(), groups.end());
      MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_INT64_T, status.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD);
      if (groups.empty()) ++ranks_finished_;
    } else if (status.MPI_TAG == kTagResult) {
      int length = 0;
      MPI_Get_count(&status, MPI_CHAR, &length);
      std::string bytes(static_cast<std::size_t>(length), '\0');
      MPI_Recv(bytes.data(), length, MPI_CHAR, status.MPI_SOURCE, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const Json message = Json::parse(bytes);
      sink.on_record(run_record_from_json(message.at("record")), message.at("protocol"));
      ++received_;
    } else {
      throw std::logic_error(fmt::format("rank 0 got a message with unknown tag {}", status.MPI_TAG));
    }
  }
}

void Sweep::run_root(const std::vector<std::size_t>& todo, const std::vector<RankIdentity>& ranks, ResultSink& sink) {
  std::vector<bool> group_needs_gpu(plan_.groups.size());
  for (std::size_t g = 0; g < plan_.groups.size(); ++g) group_needs_gpu[g] = point_needs_gpu_[plan_.groups[g].first];
  std::vector<bool> rank_has_gpu;
  for (const auto& r : ranks) rank_has_gpu.push_back(r.gpu_count > 0);
  WorkQueue queue(todo, group_needs_gpu, rank_has_gpu, options_.schedule);

  const std::size_t expected = points_of(plan_, todo).size();
  for (std::size_t index : points_of(plan_, queue.take_unrunnable())) {
    sink.on_record(skipped_record(plan_.points[index], "no rank of this run has a GPU"), Json());
    ++received_;
  }
  const int others = world_.size() - 1;
  const auto poll_slice = others > 0 ? std::chrono::microseconds(200) : std::chrono::microseconds(50'000);
  std::deque<std::size_t> mine;
  std::size_t current = 0;
  bool exhausted = false;
  while (received_ < expected || ranks_finished_ < others) {
    if (stop_requested()) throw Interrupted(fmt::format("interrupted with {} of {} points received", received_, expected));
    if (!worker_.busy()) {
      if (mine.empty() && !exhausted) {
        const auto points = points_of(plan_, queue.next(0));
        mine.assign(points.begin(), points.end());
        exhausted = points.empty();
      }
      if (!mine.empty()) {
        current = mine.front();
        mine.pop_front();
        worker_.begin(request_for(current));
      }
    }
    if (worker_.busy()) {
      if (auto result = worker_.poll(poll_slice)) {
        sink.on_record(record_of(current, *result), result->protocol);
        ++received_;
      }
    } else {
      std::this_thread::sleep_for(100us);
    }
    serve_requests(queue, sink);
    sink.on_tick();
  }
}

std::vector<std::size_t> Sweep::receive_assignment(PendingSends& sends) {
  MPI_Send(nullptr, 0, MPI_BYTE, 0, kTagRequest, MPI_COMM_WORLD);
  MPI_Status status;
  for (int arrived = 0;;) {
    MPI_Iprobe(0, kTagAssign, MPI_COMM_WORLD, &arrived, &status);
    if (arrived) break;
    if (stop_requested()) throw Interrupted("interrupted while waiting for work");
    sends.progress();
    std::this_thread::sleep_for(50us);  // a blocking receive would spin a core the workers need
  }
  int count = 0;
  MPI_Get_count(&status, MPI_INT64_T, &count);
  std::vector<std::int64_t> groups(static_cast<std::size_t>(count));
  MPI_Recv(groups.data(), count, MPI_INT64_T, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return {groups.begin(), groups.end()};
}

MeasureResult Sweep::measure_other(std::size_t index, PendingSends& sends) {
  worker_.begin(request_for(index));
  for (;;) {
    if (auto result = worker_.poll(1ms)) return *result;
    if (stop_requested()) throw Interrupted("interrupted during a point");
    sends.progress();  // large results need this side's help to move (rendezvous)
  }
}

void Sweep::run_other() {
  PendingSends sends;
  for (;;) {
    const auto groups = receive_assignment(sends);
    if (groups.empty()) break;
    for (std::size_t index : points_of(plan_, groups)) {
      const MeasureResult result = measure_other(index, sends);
      sends.send(encode_result(record_of(index, result), result.protocol), kTagResult);
    }
  }
  sends.wait_all();
}

}  // namespace

void measure_plan(const MpiWorld& world, const Plan& plan, const std::vector<std::size_t>& todo,
               const ProtocolSpec& protocol, const RunOptions& options, ResultSink* sink) {
  install_stop_handlers();
  Sweep sweep(world, plan, protocol, options);
  const auto ranks = sweep.introduce();
  if (world.rank() == 0) {
    sink->on_start(ranks);
    sweep.run_root(todo, ranks, *sink);
  } else {
    sweep.run_other();
  }
  sweep.stop_worker();
}

Json to_json(const RankIdentity& r) {
  return {{"rank", r.rank}, {"local_rank", r.local_rank}, {"gpu_count", r.gpu_count},
          {"host", to_json(r.host)}, {"gpu", to_json(r.gpu)}, {"problem", r.problem}};
}

RankIdentity rank_identity_from_json(const Json& j) {
  RankIdentity r;
  r.rank = j.at("rank").get<int>();
  r.local_rank = j.at("local_rank").get<int>();
  r.gpu_count = j.at("gpu_count").get<int>();
  r.host = host_info_from_json(j.at("host"));
  r.gpu = gpu_info_from_json(j.at("gpu"));
  r.problem = j.at("problem").get<std::string>();
  return r;
}

}  // namespace ks
