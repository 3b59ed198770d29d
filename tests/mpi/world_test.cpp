// The MPI world's collective steps under a rank that stops: each has a deadline, past which the job
// ends with a message naming the step, instead of every other rank waiting inside MPI for good.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "support/cli_runner.h"

namespace ks::testing {
namespace {

// mpirun of tests/mpi/world_deadline_ranks.cpp, with rank 1 stopped before `step`; ended by
// `timeout` should the job hang.
CommandResult run_with_rank_1_stopped_before(const std::string& step) {
  return run_shell(fmt::format("timeout -k 5 90 {} -np 2 --oversubscribe {}/tests/world_deadline_ranks {} 2>&1",
                               KS_MPIEXEC, KS_BINARY_DIR, step));
}

TEST(MpiWorld, AStoppedRankEndsTheJobAtTheSetUpOfTheGangsCommunicators) {
  const auto result = run_with_rank_1_stopped_before("duplicate");
  EXPECT_NE(result.exit_code, 124) << "the job hung: " << result.output;
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("rank 0: the ranks did not all reach the set-up of the gangs' communicators within 2 s"),
            std::string::npos)
      << result.output;
}

TEST(MpiWorld, AStoppedRankEndsTheJobAtItsEndInsteadOfHoldingTheOthersInFinalize) {
  const auto result = run_with_rank_1_stopped_before("finalize");
  EXPECT_NE(result.exit_code, 124) << "the job hung: " << result.output;
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("rank 0: the ranks did not all reach the end of the run within 2 s"), std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace ks::testing
