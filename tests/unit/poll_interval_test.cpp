#include "cluster/rank_messages.h"

#include <vector>

#include <gtest/gtest.h>

namespace ks {
namespace {

using std::chrono::microseconds;

TEST(PollInterval, StartsAtItsShortest) {
  PollInterval interval(microseconds(200), microseconds(5000));
  EXPECT_EQ(interval.next(), microseconds(200));
}

TEST(PollInterval, DoublesWithEachLookThatFindsNothingUpToItsCeiling) {
  PollInterval interval(microseconds(200), microseconds(5000));
  std::vector<long> waits;
  for (int look = 0; look < 7; ++look) {
    interval.after_look(false);
    waits.push_back(interval.next().count());
  }
  EXPECT_EQ(waits, (std::vector<long>{400, 800, 1600, 3200, 5000, 5000, 5000}));
}

TEST(PollInterval, ComesBackToItsShortestOnceALookFindsSomething) {
  PollInterval interval(microseconds(50), microseconds(1000));
  for (int look = 0; look < 10; ++look) interval.after_look(false);
  ASSERT_EQ(interval.next(), microseconds(1000));
  interval.after_look(true);
  EXPECT_EQ(interval.next(), microseconds(50));
  interval.after_look(false);
  EXPECT_EQ(interval.next(), microseconds(100));
}

TEST(PollInterval, ACeilingBelowTheShortestWaitHoldsItConstant) {
  PollInterval interval(microseconds(50'000), microseconds(1000));
  interval.after_look(false);
  EXPECT_EQ(interval.next(), microseconds(50'000));
}

}  // namespace
}  // namespace ks
