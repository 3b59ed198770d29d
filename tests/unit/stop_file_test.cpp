// run --stop-file as rank 0 watches it: the file's first line is the reason given, including when
// the file is seen between its creation and the writing of its line (`echo REASON > FILE`).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "cluster/interruption.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

// Asks stop_requested() until it says yes, for at most two seconds (it looks at the file four times
// a second at most).
bool stop_comes() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop_requested()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(StopFileWatch, AFileSeenBeforeItsLineIsWrittenGivesItsLine) {
  const std::filesystem::path stop = fresh_directory("stop_file_watch") / "stop-now";
  watch_stop_file(stop.string());
  EXPECT_FALSE(stop_requested());
  std::ofstream(stop).flush();  // created, its line not yet written
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(stop_requested()) << "a file found empty is read again before the run stops";
  write_file(stop, "the time limit is near\n");
  ASSERT_TRUE(stop_comes());
  EXPECT_EQ(stop_reason(), "the time limit is near");
}

TEST(StopFileWatch, AFileThatStaysEmptyStopsTheRunWithItsPath) {
  const std::filesystem::path stop = fresh_directory("stop_file_watch_empty") / "stop-now";
  watch_stop_file(stop.string());
  std::ofstream(stop).flush();
  ASSERT_TRUE(stop_comes());
  EXPECT_EQ(stop_reason(), "stop file " + stop.string());
  watch_stop_file("");  // the next test of this process watches no file
}

}  // namespace
}  // namespace ks::testing
