// The profiler's statistics and retry loop on injected timings (no real timing is asserted: a
// loaded CI machine makes any such assertion flaky), and one quick real profile checked for shape
// only.
#include "runtime/profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "runtime/collective_profiler.h"
#include "runtime/profile_database.h"

namespace alpa::runtime {
namespace {

// A sampler that yields `times` in order (and fails past the end).
Sampler Scripted(std::vector<double> times, size_t* calls) {
  return [times = std::move(times), calls]() -> Result<double> {
    if (*calls >= times.size()) return Internal("sampler called {} times", *calls + 1);
    return times[(*calls)++];
  };
}

TEST(ProfilerStatsTest, MedianAndQuantiles) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.0), 1);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 1.0), 5);
  EXPECT_DOUBLE_EQ(Quantile({5, 4, 3, 2, 1}, 0.25), 2);
  // 11 values 0..10: p10 = 1, p90 = 9, median 5 -> spread 8 / 5.
  std::vector<double> values;
  for (int i = 10; i >= 0; --i) values.push_back(i);
  EXPECT_DOUBLE_EQ(RelativeSpread(values), 8.0 / 5.0);
  EXPECT_DOUBLE_EQ(RelativeSpread({2, 2, 2}), 0);
  EXPECT_DOUBLE_EQ(RelativeSpread({2}), 0);
  // 7 values: p10 sits 0.6 of the way from the 1st to the 2nd, p90 0.4 from the 6th to the 7th.
  EXPECT_NEAR(RelativeSpread({1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0}), 0.4, 1e-12);
}

TEST(ProfilerStatsTest, TightFigureIsKeptAtOnce) {
  size_t calls = 0;
  Measurement m;
  m.work = 100;
  MeasureSettings settings{5, 0.05, 3};
  ASSERT_TRUE(MeasureFigure(Scripted({1.00, 1.01, 0.99, 1.00, 1.02}, &calls), settings, m).ok());
  EXPECT_EQ(calls, 5u);
  EXPECT_DOUBLE_EQ(m.median_s, 1.00);
  EXPECT_EQ(m.retries, 0);
  EXPECT_FALSE(m.flagged);
  EXPECT_EQ(m.runs.size(), 5u);
  EXPECT_NEAR(m.spread, RelativeSpread({1.00, 1.01, 0.99, 1.00, 1.02}), 1e-15);
  EXPECT_DOUBLE_EQ(m.Throughput(), 100);
}

TEST(ProfilerStatsTest, WideFigureIsRemeasuredThenKept) {
  size_t calls = 0;
  Measurement m;
  MeasureSettings settings{3, 0.05, 3};
  // First attempt is wide (spread 1.2), the second is tight: it is the figure.
  ASSERT_TRUE(MeasureFigure(Scripted({1.0, 2.0, 0.5, 2.0, 2.01, 1.99}, &calls), settings, m).ok());
  EXPECT_EQ(calls, 6u);
  EXPECT_EQ(m.retries, 1);
  EXPECT_FALSE(m.flagged);
  EXPECT_DOUBLE_EQ(m.median_s, 2.0);
  EXPECT_THAT(m.runs, ::testing::ElementsAre(2.0, 2.01, 1.99));
}

TEST(ProfilerStatsTest, AlwaysWideFigureIsFlaggedKeepingTheTightestAttempt) {
  size_t calls = 0;
  Measurement m;
  MeasureSettings settings{3, 0.05, 2};
  // Three attempts (1 + 2 retries), all too wide; the second is the least wide.
  ASSERT_TRUE(MeasureFigure(Scripted({1, 2, 3, 1.0, 1.2, 1.1, 1, 5, 3}, &calls), settings, m).ok());
  EXPECT_EQ(calls, 9u);
  EXPECT_EQ(m.retries, 2);
  EXPECT_TRUE(m.flagged);
  EXPECT_DOUBLE_EQ(m.median_s, 1.1);
  EXPECT_GT(m.spread, 0.05);
  EXPECT_NEAR(m.spread, RelativeSpread({1.0, 1.2, 1.1}), 1e-15);
}

TEST(ProfilerStatsTest, NoRetriesFlagsAtOnce) {
  size_t calls = 0;
  Measurement m;
  ASSERT_TRUE(MeasureFigure(Scripted({1, 2, 3}, &calls), MeasureSettings{3, 0.05, 0}, m).ok());
  EXPECT_EQ(calls, 3u);
  EXPECT_EQ(m.retries, 0);
  EXPECT_TRUE(m.flagged);
}

TEST(ProfilerStatsTest, SamplerErrorsAndBadSettingsAreReturned) {
  size_t calls = 0;
  Measurement m;
  Status status = MeasureFigure(Scripted({1}, &calls), MeasureSettings{3, 0.05, 0}, m);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), ::testing::HasSubstr("sampler called 2 times"));
  EXPECT_FALSE(MeasureFigure(Scripted({1}, &calls), MeasureSettings{0, 0.05, 0}, m).ok());
  EXPECT_FALSE(MeasureFigure(Scripted({1}, &calls), MeasureSettings{1, 0.05, -1}, m).ok());
}

TEST(ProfilerStatsTest, TimedSamplerCalibratesAndPropagatesErrors) {
  int count = 0;
  int64_t iterations = 0;
  Result<Sampler> sampler = MakeTimedSampler(
      [&] {
        ++count;
        return Status::Ok();
      },
      1e-4, &iterations);
  ASSERT_TRUE(sampler.ok());
  EXPECT_GE(iterations, 1);
  const int before = count;
  Result<double> seconds = (*sampler)();
  ASSERT_TRUE(seconds.ok());
  EXPECT_GE(*seconds, 0);
  EXPECT_EQ(count - before, iterations);

  Result<Sampler> failing =
      MakeTimedSampler([] { return InvalidArgument("kernel rejected it"); }, 1e-4, nullptr);
  ASSERT_FALSE(failing.ok());
  EXPECT_THAT(failing.status().message(), ::testing::HasSubstr("kernel rejected it"));
}

TEST(ProfilerTest, QuickProfileHasEveryFigureWithASpread) {
  ProfileOptions options = QuickProfileOptions();
  options.cluster_name = "local:2";
  options.devices = 2;
  std::vector<std::string> lines;
  options.progress = [&](const std::string& line) { lines.push_back(line); };
  Result<ProfileDatabase> db = RunProfile(options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  // 4 dtypes x (2 square + 1 skinny) matmuls, 3 dtypes x 1 conv, 2 elementwise sizes, 4
  // collectives x 2 sizes over the 2 devices.
  ASSERT_EQ(db->measurements.size(), 4u * 3 + 3 + 2 + 4 * 2);
  std::set<std::string> names;
  for (const Measurement& m : db->measurements) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_GT(m.median_s, 0) << m.name;
    EXPECT_GE(m.spread, 0) << m.name;
    EXPECT_EQ(m.runs.size(), 3u) << m.name;
    EXPECT_GT(m.work, 0) << m.name;
  }
  EXPECT_TRUE(names.count("all-reduce f32 4 KiB x2"));
  EXPECT_TRUE(names.count("all-to-all f32 256 KiB x2"));
  const Measurement& gather = db->measurements[4 * 3 + 3 + 2 + 2];
  EXPECT_EQ(gather.kind, "all-gather");
  EXPECT_EQ(gather.shape, (std::vector<int64_t>{2, 1024}));
  EXPECT_EQ(gather.work, 4096);
  EXPECT_EQ(db->devices, 2);
  EXPECT_EQ(db->threads_per_device, ThreadsPerDevice(2));
  EXPECT_FALSE(db->onednn_version.empty());
  EXPECT_TRUE(db->collectives_measured);
  EXPECT_EQ(db->collectives_reason, "");
  ASSERT_EQ(lines.size(), db->measurements.size());
  EXPECT_THAT(lines[0], ::testing::StartsWith("[1/25] matmul f32 64^3: "));
  EXPECT_THAT(lines[0], ::testing::HasSubstr("FLOP/s ± "));
  EXPECT_THAT(lines.back(), ::testing::StartsWith("[25/25] all-to-all f32 256 KiB x2: "));
  EXPECT_THAT(lines.back(), ::testing::HasSubstr("B/s ± "));
}

TEST(ProfilerTest, OneDeviceMeasuresNoCollective) {
  ProfileOptions options = QuickProfileOptions();
  options.dtypes = {"f32"};
  options.devices = 1;
  Result<ProfileDatabase> db = RunProfile(options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (const Measurement& m : db->measurements) {
    EXPECT_TRUE(m.unit == "FLOP" || m.kind == "elementwise") << m.name;
  }
  EXPECT_FALSE(db->collectives_measured);
  EXPECT_EQ(db->collectives_reason, kCollectivesOneDevice);
  EXPECT_TRUE(db->collectives.empty());
}

TEST(CollectiveTimerTest, TimesEveryKindAndSplitsSizesEvenly) {
  EXPECT_EQ(CollectiveElements(4096, 2), 1024);
  EXPECT_EQ(CollectiveElements(4096, 3), 1023);  // a multiple of 3 for reduce-scatter, all-to-all
  CollectiveTimer timer(3);
  for (const std::string& kind : ProfiledCollectives()) {
    Result<double> seconds = timer.Time(kind, CollectiveElements(4096, 3), 5);
    ASSERT_TRUE(seconds.ok()) << kind << ": " << seconds.status().ToString();
    EXPECT_GT(*seconds, 0) << kind;
  }
  Result<double> unknown = timer.Time("all-sum", 1023, 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), ::testing::HasSubstr("'all-sum'"));
  // The timer stays usable after a bad command.
  EXPECT_TRUE(timer.Time("all-reduce", 3, 1).ok());
}

TEST(ProfilerTest, BadOptionsAreErrors) {
  ProfileOptions options = QuickProfileOptions();
  options.devices = 0;
  EXPECT_FALSE(RunProfile(options).ok());
  options = QuickProfileOptions();
  options.dtypes = {"s32"};
  Result<ProfileDatabase> db = RunProfile(options);
  ASSERT_FALSE(db.ok());
  EXPECT_THAT(db.status().message(), ::testing::HasSubstr("'s32'"));
}

}  // namespace
}  // namespace alpa::runtime
