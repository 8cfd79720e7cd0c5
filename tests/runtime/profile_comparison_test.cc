// Comparing two profiles: only figures both kept are compared, derived figures only where both
// profiles have them, the moved ones come out largest first, and collectives are marked when the
// cores' round trips say the host placed the cores differently.
#include "runtime/profile_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace alpa::runtime {
namespace {

using ::testing::ElementsAre;

Measurement Timed(const std::string& name, double median_s, bool flagged = false,
                  const std::string& kind = "matmul") {
  Measurement m;
  m.kind = kind;
  m.name = name;
  m.median_s = median_s;
  m.flagged = flagged;
  return m;
}

TEST(ProfileComparisonTest, ComparesWhatBothKept) {
  ProfileDatabase before;
  before.measurements = {Timed("a", 1.0), Timed("b", 2.0), Timed("c", 1.0, true), Timed("d", 1.0)};
  before.peak_flops = {{"f32", 100}, {"f64", 10}};
  before.memory_bandwidth = 0;  // its largest add was flagged
  before.collectives = {{"all-reduce", {.latency_s = 1e-5, .bandwidth = 1e9}}};
  ProfileDatabase after;
  // "d" is flagged now, "e" is new; "a" moved 25%, "b" 5%.
  after.measurements = {Timed("b", 2.1), Timed("a", 1.25), Timed("c", 1.0), Timed("d", 1.0, true),
                        Timed("e", 1.0)};
  after.peak_flops = {{"f32", 90}};
  after.memory_bandwidth = 5e9;
  after.collectives = {{"all-reduce", {.latency_s = 1.2e-5, .bandwidth = 1e9}}};

  const ProfileComparison comparison = CompareProfiles(before, after);
  ASSERT_EQ(comparison.measurements.size(), 2u);
  EXPECT_EQ(comparison.measurements[0].name, "b");
  EXPECT_NEAR(comparison.measurements[0].relative, 0.05, 1e-12);
  EXPECT_EQ(comparison.measurements[1],
            (FigureChange{.name = "a", .before = 1.0, .after = 1.25, .relative = 0.25}));
  EXPECT_THAT(comparison.not_compared, ElementsAre("c", "d", "e"));

  ASSERT_EQ(comparison.derived.size(), 3u);
  EXPECT_EQ(comparison.derived[0].name, "peak_flops f32");
  EXPECT_NEAR(comparison.derived[0].relative, 0.1, 1e-12);
  EXPECT_EQ(comparison.derived[1].name, "all-reduce latency_s");
  EXPECT_NEAR(comparison.derived[1].relative, 0.2, 1e-12);
  EXPECT_EQ(comparison.derived[2].name, "all-reduce bandwidth");
  EXPECT_EQ(comparison.derived[2].relative, 0);

  const std::vector<FigureChange> moved = MovedMoreThan(comparison.derived, 0.1);
  ASSERT_EQ(moved.size(), 1u);  // 10% is not more than 10%
  EXPECT_EQ(moved[0].name, "all-reduce latency_s");
  EXPECT_EQ(MovedMoreThan(comparison.measurements, 0.01)[0].name, "a");
  // Neither profile took the cores' round trip.
  EXPECT_FALSE(comparison.core_round_trip.has_value());
  EXPECT_FALSE(comparison.cores_placed_differently);
}

TEST(ProfileComparisonTest, RoundTripsTellWhetherTheCoresWerePlacedDifferently) {
  ProfileDatabase before;
  before.measurements = {Timed("mm", 1.0), Timed("ar", 7e-6, false, "all-reduce")};
  before.collectives = {{"all-reduce", {.latency_s = 7e-6, .bandwidth = 5e9}}};
  before.core_round_trips_s = {130e-9, 150e-9, 125e-9};  // median 130 ns: one core complex
  ProfileDatabase after = before;
  after.measurements[1].median_s = 10e-6;
  after.collectives["all-reduce"].latency_s = 10e-6;
  after.core_round_trips_s = {480e-9, 470e-9, 700e-9};  // median 480 ns: two

  ProfileComparison moved = CompareProfiles(before, after);
  ASSERT_TRUE(moved.core_round_trip.has_value());
  EXPECT_DOUBLE_EQ(moved.core_round_trip->before, 130e-9);
  EXPECT_DOUBLE_EQ(moved.core_round_trip->after, 480e-9);
  EXPECT_TRUE(moved.cores_placed_differently);
  ASSERT_EQ(moved.measurements.size(), 2u);
  EXPECT_FALSE(moved.measurements[0].collective);
  EXPECT_TRUE(moved.measurements[1].collective);
  EXPECT_TRUE(moved.derived[0].collective);  // all-reduce latency_s

  after.core_round_trips_s = {250e-9};  // within twice 130 ns: the same placement
  EXPECT_FALSE(CompareProfiles(before, after).cores_placed_differently);
  after.core_round_trips_s.clear();  // not taken: nothing said about placement
  EXPECT_FALSE(CompareProfiles(before, after).core_round_trip.has_value());
}

}  // namespace
}  // namespace alpa::runtime
