// On GPUs: the nccl and nccl_graph implementations of the five collectives. A worker's gang member
// (cluster/nccl_member.h) measures and checks every collective, every data type and reduction, in and
// out of place, in a gang of one, and keeps its communicator for the next point; a gang whose other
// member never comes ends at the point's timeout with its communicator aborted. Then a whole sweep
// under mpirun with one rank per GPU: every collective point passed and checked over the gang, its
// bandwidths stored. Skipped where no GPU is present.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "cluster/nccl_member.h"
#include "store/results_file.h"
#include "support/cli_runner.h"
#include "support/kernels.h"
#include "support/python_worker.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

MeasureRequest gang_request(const std::string& kernel, const std::string& implementation, const Json& overrides,
                            const std::string& nccl_id, std::vector<int> members = {0}) {
  MeasureRequest request = request_for(kernel, implementation, "run", overrides);
  request.gang = GangSeat{std::move(members), 0, nccl_id, 60};
  return request;
}

const std::vector<std::string>& collectives() {
  static const std::vector<std::string> names{"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"};
  return names;
}

TEST(NcclGpu, EveryCollectivePassesItsCheckInAGangOfOneAndKeepsItsCommunicator) {
  SKIP_WITHOUT_GPU();
  NcclMember member;
  std::string id = member.new_unique_id();
  EXPECT_EQ(id.size(), 256u);
  for (const std::string& kernel : collectives())
    for (const std::string implementation : {"nccl", "nccl_graph"})
      for (const bool in_place : {false, true}) {
        // The first point makes the communicator from the id; every later one uses the one kept.
        const MeasureResult r =
            member.measure(gang_request(kernel, implementation, {{"bytes", 1 << 20}, {"in_place", in_place}}, id));
        id.clear();
        const std::string what = fmt::format("{} {} in_place {}", kernel, implementation, in_place);
        EXPECT_EQ(r.record.status, "passed") << what << ": " << r.record.message;
        EXPECT_EQ(r.record.wrong_elements, 0) << what;
        EXPECT_FALSE(r.worker_exits) << what;
        EXPECT_GT(r.record.n_repeat, 0) << what;
        EXPECT_EQ(r.record.samples_ns.size(), static_cast<std::size_t>(r.record.n_repeat)) << what;
        EXPECT_GT(r.record.stats.median_ns, 0) << what;
        EXPECT_EQ(r.protocol.at("flush_bytes"), 0) << what;
        EXPECT_EQ(r.protocol.at("timer"), "cuda_events") << what;
        std::printf("[%s] median %.2f us, %.1f GB/s algorithm bandwidth: %s\n", what.c_str(),
                    r.record.stats.median_ns / 1e3, r.record.bytes / r.record.stats.median_ns,
                    r.record.message.c_str());
      }
}

TEST(NcclGpu, EveryDataTypeAndReductionIsExact) {
  SKIP_WITHOUT_GPU();
  NcclMember member;
  std::string id = member.new_unique_id();
  for (const std::string dtype : {"fp32", "fp64", "fp16", "bf16", "int32", "int64", "int8", "uint8"})
    for (const std::string op : {"sum", "prod", "max", "min", "avg"})
      for (const std::string kernel : {"all_reduce", "reduce_scatter"}) {
        const MeasureResult r =
            member.measure(gang_request(kernel, "nccl", {{"bytes", 64 << 10}, {"dtype", dtype}, {"op", op}}, id));
        id.clear();
        EXPECT_EQ(r.record.status, "passed") << kernel << " " << dtype << " " << op << ": " << r.record.message;
        EXPECT_EQ(r.record.wrong_elements, 0) << kernel << " " << dtype << " " << op;
      }
}

TEST(NcclGpu, APointWithoutAnIdNeedsAKeptCommunicator) {
  SKIP_WITHOUT_GPU();
  NcclMember member;
  const MeasureResult r = member.measure(gang_request("all_reduce", "nccl", {{"bytes", 4096}}, ""));
  EXPECT_EQ(r.record.status, "error");
  EXPECT_NE(r.record.message.find("no NCCL communicator is kept for this gang"), std::string::npos) << r.record.message;
}

TEST(NcclGpu, AMemberThatNeverComesEndsThePointAtItsTimeoutWithTheCommunicatorAborted) {
  SKIP_WITHOUT_GPU();
  NcclMember member;
  MeasureRequest request = gang_request("all_reduce", "nccl", {{"bytes", 4096}}, member.new_unique_id(), {0, 1});
  request.gang->timeout_s = 3;
  const auto start = std::chrono::steady_clock::now();
  const MeasureResult r = member.measure(request);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.record.status, "timeout") << r.record.message;
  EXPECT_NE(r.record.message.find("NCCL communicator was aborted"), std::string::npos) << r.record.message;
  EXPECT_TRUE(r.worker_exits);
  EXPECT_GE(seconds, 3);
  EXPECT_LT(seconds, 60) << "the abort should end the wait soon after the timeout";
  std::printf("[member that never comes] %s after %.1f s\n", r.record.status.c_str(), seconds);
}

TEST(NcclGpu, ASweepWithOneRankPerGpuStoresCheckedCollectives) {
  SKIP_WITHOUT_GPU();
  const int gpus = visible_gpu_count();
  const fs::path dir = fresh_directory("nccl_sweep");
  const fs::path sweep = write_sweep(dir, fmt::format(R"(name: nccl
protocol: {{warmup_ms: 2, rep_ms: 10}}
kernels:
  - kernel: all_reduce
    implementations: [nccl, nccl_graph]
    grid: {{bytes: [64K, 16M], group_size: [{2}], op: [sum, avg]}}
  - kernel: all_gather
    implementations: [nccl]
    grid: {{bytes: [16M], group_size: [{2}], in_place: [false, true]}}
  - kernel: reduce_scatter
    implementations: [nccl]
    grid: {{bytes: [16M], group_size: [{0}]}}
  - kernel: alltoall
    implementations: [nccl]
    grid: {{bytes: [16M], group_size: [{0}]}}
  - kernel: broadcast
    implementations: [nccl_graph]
    grid: {{bytes: [16M], group_size: [{0}], root: [{1}]}}
)",
                                                      gpus, gpus - 1, gpus > 1 ? fmt::format("1, {}", gpus) : "1"));
  const auto ids = planned_ids(sweep);
  const auto run = run_shell(
      "timeout 300 " + mpirun_test_cli(gpus, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const ResultsFile file = ResultsFile::open_read_only(dir / "nccl.h5");
  const auto rows = file.read_runs();
  EXPECT_EQ(rows.size(), ids.size());
  for (const StoredRun& r : rows) {
    EXPECT_EQ(r.status, "passed") << r.kernel << " " << r.params_json << ": " << r.message;
    EXPECT_EQ(r.wrong_elements, 0) << r.params_json;
    EXPECT_NE(r.message.find("every member received the elements expected"), std::string::npos) << r.message;
    EXPECT_FALSE(std::isnan(r.bus_gbps)) << r.params_json;
    EXPECT_EQ(file.read_samples(r.samples_offset, r.samples_count).size(), static_cast<std::size_t>(r.n_repeat));
    std::printf("[%s %s %s] %.2f us, %.1f GB/s bus\n", r.kernel.c_str(), r.implementation.c_str(),
                r.params_json.c_str(), r.stats.median_ns / 1e3, r.bus_gbps);
  }
}

}  // namespace
}  // namespace ks::testing
