// main() of every test executable: GoogleTest's, except that a run whose every case skipped itself
// (a GPU test where no GPU is present) exits with KS_GTEST_ALL_SKIPPED, which ctest reports as
// skipped (cmake/gtest_suites.cmake). A run with any failure still fails; one with any pass passes.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  const ::testing::UnitTest& run = *::testing::UnitTest::GetInstance();
  const bool all_skipped =
      failed == 0 && run.test_to_run_count() > 0 && run.skipped_test_count() == run.test_to_run_count();
  return all_skipped ? KS_GTEST_ALL_SKIPPED : failed;
}
