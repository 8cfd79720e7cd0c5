// The cores' round trip: it runs and leaves the caller's affinity as it was (or declines on one
// core), and the placement rule: more than twice apart.
#include "runtime/core_round_trip.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

namespace alpa::runtime {
namespace {

cpu_set_t ThisThreadsCores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(mask), &mask), 0);
  return mask;
}

TEST(CoreRoundTripTest, TimesRoundTripsAndRestoresTheCallersCores) {
  const cpu_set_t before = ThisThreadsCores();
  Result<double> seconds = TimeCoreRoundTrips(1000);
  if (CPU_COUNT(&before) < 2) {
    ASSERT_FALSE(seconds.ok());
    EXPECT_EQ(seconds.status().code(), StatusCode::kFailedPrecondition);
    return;
  }
  ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
  EXPECT_GT(*seconds, 0);
  const cpu_set_t after = ThisThreadsCores();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(CoreRoundTripTest, PlacedDifferentlyWhenMoreThanTwiceApart) {
  EXPECT_TRUE(CoresPlacedDifferently(130e-9, 480e-9));
  EXPECT_TRUE(CoresPlacedDifferently(480e-9, 130e-9));
  EXPECT_FALSE(CoresPlacedDifferently(450e-9, 520e-9));
  EXPECT_FALSE(CoresPlacedDifferently(100e-9, 200e-9));  // twice is not more than twice
  EXPECT_FALSE(CoresPlacedDifferently(0, 480e-9));       // nothing measured
}

TEST(CoreRoundTripTest, MovedDuringWhenTheQuantilesWerePlacedDifferently) {
  // Five rounds on one core complex, four on two: the host moved the cores mid-profile.
  EXPECT_TRUE(
      CoresMovedDuring({130e-9, 125e-9, 140e-9, 135e-9, 128e-9, 480e-9, 470e-9, 500e-9, 490e-9}));
  // One slow round among nine is an outlier, not a move.
  EXPECT_FALSE(
      CoresMovedDuring({130e-9, 125e-9, 140e-9, 135e-9, 128e-9, 131e-9, 133e-9, 129e-9, 770e-9}));
  EXPECT_FALSE(CoresMovedDuring({480e-9}));
  EXPECT_FALSE(CoresMovedDuring({}));
}

}  // namespace
}  // namespace alpa::runtime
