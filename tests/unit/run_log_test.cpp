// The job log's start block and its lines for points that did not pass (run/run_log.h).
#include <gtest/gtest.h>

#include "run/run_log.h"

namespace ks {
namespace {

RankIdentity rank_on(int rank, const std::string& host, int gpu_index, const std::string& gpu_name) {
  RankIdentity r;
  r.rank = rank;
  r.host.hostname = host;
  r.gpu_count = gpu_index >= 0 ? 1 : 0;
  r.gpu.index = gpu_index;
  r.gpu.name = gpu_name;
  return r;
}

TEST(SchedulerLine, SaysTheJobItsArrayTaskRequeuesAndNodes) {
  EXPECT_EQ(scheduler_line({}), "");
  EXPECT_EQ(scheduler_line({{"SLURM_JOB_ID", "1234"}, {"SLURM_JOB_NODELIST", "gpu[01-02]"}}),
            "slurm job 1234, nodes gpu[01-02]");
  EXPECT_EQ(scheduler_line({{"SLURM_JOB_ID", "1236"},
                            {"SLURM_ARRAY_JOB_ID", "1234"},
                            {"SLURM_ARRAY_TASK_ID", "2"},
                            {"SLURM_ARRAY_TASK_COUNT", "3"},
                            {"SLURM_RESTART_COUNT", "1"},
                            {"SLURM_JOB_PARTITION", "h200"},
                            {"SLURM_JOB_NODELIST", "gpu07"}}),
            "slurm job 1236 (array job 1234, task 2 of 3), requeued 1 time(s), partition h200, nodes gpu07");
  EXPECT_EQ(scheduler_line({{"SLURM_JOB_ID", "9"}, {"SLURM_RESTART_COUNT", "0"}}), "slurm job 9");
}

TEST(StartBlock, SaysTheSweepThePlanEachNodesRanksAndGpusAndTheOutput) {
  const RunHeadline headline{"liger", "configs/liger.yaml", "1/3", 24, 20, "out/liger.h5", "out/kernelindex", "jsonl"};
  const std::vector<RankIdentity> ranks{rank_on(0, "gpu01", 0, "NVIDIA H200"), rank_on(1, "gpu01", 1, "NVIDIA H200"),
                                        rank_on(2, "cpu07", -1, "")};
  const std::string block = start_block(headline, ranks, "slurm job 7, nodes gpu01,cpu07");
  EXPECT_NE(block.find("sweep liger (configs/liger.yaml)\n"), std::string::npos) << block;
  EXPECT_NE(block.find("\n  job: slurm job 7, nodes gpu01,cpu07\n"), std::string::npos) << block;
  EXPECT_NE(block.find("\n  plan: 24 points (shard 1/3), 20 to measure\n"), std::string::npos) << block;
  EXPECT_NE(block.find("\n  ranks: 3 on 2 node(s)\n"), std::string::npos) << block;
  EXPECT_NE(block.find("\n  gpu01: ranks 0-1, GPUs 0 NVIDIA H200, 1 NVIDIA H200\n"), std::string::npos) << block;
  EXPECT_NE(block.find("\n  cpu07: rank 2, no GPU: cpu implementations only\n"), std::string::npos) << block;
  EXPECT_NE(block.find("\n  output: out/liger.h5, documents in out/kernelindex (jsonl)\n"), std::string::npos) << block;
  EXPECT_EQ(start_block(headline, ranks, "").find("job:"), std::string::npos);
  EXPECT_EQ(block.find("CPU core"), std::string::npos) << "no rank said what it may use";
}

TEST(StartBlock, SaysTheCpuCoresEachRankMayUseAndWarnsOfAGpuRankBoundToOne) {
  const RunHeadline headline{"liger", "configs/liger.yaml", "", 4, 4, "out/liger.h5", "out/kernelindex", "jsonl"};
  std::vector<RankIdentity> ranks{rank_on(0, "gpu01", 0, "NVIDIA H200"), rank_on(1, "gpu01", 1, "NVIDIA H200"),
                                  rank_on(2, "cpu07", -1, "")};
  ranks[0].host.cpus_allowed = ranks[1].host.cpus_allowed = 8;
  ranks[2].host.cpus_allowed = 1;
  std::string block = start_block(headline, ranks, "");
  EXPECT_NE(block.find("\n  gpu01: ranks 0-1, GPUs 0 NVIDIA H200, 1 NVIDIA H200; 8 CPU cores each\n"),
            std::string::npos)
      << block;
  EXPECT_NE(block.find("\n  cpu07: rank 2, no GPU: cpu implementations only; 1 CPU core each\n"), std::string::npos)
      << block;
  EXPECT_EQ(block.find("note:"), std::string::npos) << "a CPU rank on one core is no problem of GPU timing";

  ranks[1].host.cpus_allowed = 1;
  block = start_block(headline, ranks, "");
  EXPECT_NE(block.find("\n  gpu01: ranks 0-1, GPUs 0 NVIDIA H200, 1 NVIDIA H200; 1-8 CPU cores each\n"),
            std::string::npos)
      << block;
  EXPECT_NE(block.find("\n  note: a GPU rank may use one CPU core"), std::string::npos) << block;
}

TEST(NotPassedLine, NamesStatusPointRankAndTheMessagesFirstLine) {
  RunRecord r;
  r.status = "crashed";
  r.kernel = "gemm";
  r.implementation = "cublas";
  r.mode = "forward";
  r.params_json = R"({"M":4096,"dtype":"bf16"})";
  r.rank = 3;
  r.host = "gpu02";
  r.message = "the worker was killed by signal 9 (SIGKILL)\nstderr: ...";
  EXPECT_EQ(
      not_passed_line(r),
      "crashed: gemm/cublas/forward M=4096 dtype=bf16 on rank 3 (gpu02): the worker was killed by signal 9 (SIGKILL)");
}

}  // namespace
}  // namespace ks
