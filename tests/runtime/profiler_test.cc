// The profiler's statistics, rounds and passes on injected timings (no real timing is asserted: a
// loaded CI machine makes any such assertion flaky), and one quick real profile checked for shape
// only.
#include "runtime/profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "runtime/collective_profiler.h"
#include "runtime/core_round_trip.h"
#include "runtime/kernel_launch.h"
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

// MeasureFigures of one figure.
Status MeasureFigure(const Sampler& sample, const MeasureSettings& settings, Measurement& figure) {
  std::vector<Measurement> figures = {std::move(figure)};
  const Status status = MeasureFigures({sample}, settings, figures, nullptr);
  figure = std::move(figures[0]);
  return status;
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

// The confidence interval's ranks, worked by hand from Binomial(n, 1/2):
//   n = 5: P(B < 1) = 1/32 > 2.5%, so no rank qualifies: [min, max].
//   n = 9: P(B < 2) = 10/512 = 1.95% <= 2.5% < P(B < 3) = 46/512: [x(2), x(8)].
//   n = 15: P(B < 4) = 576/32768 = 1.76% <= 2.5% < P(B < 5) = 1941/32768: [x(4), x(12)].
TEST(ProfilerStatsTest, MedianUncertaintyIsTheConfidenceIntervalOfTheMedian) {
  EXPECT_DOUBLE_EQ(MedianUncertainty({1, 2, 3, 4, 9}), 6.0 / 3.0);              // [1, 9] around 3
  EXPECT_DOUBLE_EQ(MedianUncertainty({9, 1, 8, 2, 7, 3, 6, 4, 5}), 3.0 / 5.0);  // [2, 8] around 5
  // One wild run in nine moves neither end of the interval.
  EXPECT_DOUBLE_EQ(MedianUncertainty({10, 10, 10, 10, 10, 10, 10, 11, 100}), 0.1);
  std::vector<double> fifteen;
  for (int i = 1; i <= 15; ++i) fifteen.push_back(i);
  EXPECT_DOUBLE_EQ(MedianUncertainty(fifteen), 4.0 / 8.0);  // [4, 12] around 8
  EXPECT_DOUBLE_EQ(MedianUncertainty({2, 2, 2}), 0);
  EXPECT_DOUBLE_EQ(MedianUncertainty({2}), 0);
}

// A sampler that returns `base` and appends `name` to `order` on each call.
Sampler Logged(const std::string& name, double base, std::vector<std::string>* order) {
  return [=]() -> Result<double> {
    order->push_back(name);
    return base;
  };
}

TEST(ProfilerStatsTest, FiguresAreMeasuredInRounds) {
  std::vector<std::string> order;
  std::vector<Measurement> figures(3);
  std::vector<std::string> progress;
  ASSERT_TRUE(
      MeasureFigures({Logged("a", 1, &order), Logged("b", 2, &order), Logged("c", 3, &order)},
                     MeasureSettings{2, 0.05, 3}, figures,
                     [&](const std::string& line) { progress.push_back(line); })
          .ok());
  EXPECT_THAT(order, ::testing::ElementsAre("a", "b", "c", "a", "b", "c"));
  EXPECT_DOUBLE_EQ(figures[1].median_s, 2);
  EXPECT_EQ(figures[2].runs.size(), 2u);
  EXPECT_EQ(figures[0].retries, 0);
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_THAT(progress[1], ::testing::StartsWith("round 2/2 of 3 figure(s): "));
}

TEST(ProfilerStatsTest, CertainFigureIsKeptAfterOnePass) {
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
  EXPECT_NEAR(m.uncertainty, 0.02, 1e-12);  // [0.99, 1.02] around 1.00
  EXPECT_DOUBLE_EQ(m.Throughput(), 100);
}

// Only the uncertain figure gets more passes, and its runs accumulate: after 3 and 6 runs the
// interval is [min, max], which the 1.2 keeps wide; after 9 it is [x(2), x(8)] = [1.01, 1.03]
// around 1.02, and the figure is kept.
TEST(ProfilerStatsTest, UncertainFigureGetsMorePassesOfRounds) {
  size_t wide_calls = 0;
  std::vector<std::string> order;
  std::vector<Measurement> figures(2);
  ASSERT_TRUE(
      MeasureFigures({Scripted({1.0, 1.2, 1.02, 1.02, 1.03, 1.01, 1.02, 1.02, 1.03}, &wide_calls),
                      Logged("tight", 2, &order)},
                     MeasureSettings{3, 0.05, 3}, figures, nullptr)
          .ok());
  EXPECT_EQ(wide_calls, 9u);
  EXPECT_EQ(order.size(), 3u);
  EXPECT_EQ(figures[0].retries, 2);
  EXPECT_FALSE(figures[0].flagged);
  EXPECT_EQ(figures[0].runs.size(), 9u);
  EXPECT_DOUBLE_EQ(figures[0].median_s, 1.02);
  EXPECT_NEAR(figures[0].uncertainty, 0.01 / 1.02, 1e-12);
  EXPECT_EQ(figures[1].retries, 0);
}

TEST(ProfilerStatsTest, AlwaysUncertainFigureIsFlaggedWithAllItsRuns) {
  size_t calls = 0;
  Measurement m;
  MeasureSettings settings{3, 0.05, 2};
  // Three passes (1 + 2 retries), all wide: every run is kept.
  ASSERT_TRUE(MeasureFigure(Scripted({1, 2, 3, 1.0, 1.2, 1.1, 1, 5, 3}, &calls), settings, m).ok());
  EXPECT_EQ(calls, 9u);
  EXPECT_EQ(m.retries, 2);
  EXPECT_TRUE(m.flagged);
  EXPECT_EQ(m.runs.size(), 9u);
  EXPECT_DOUBLE_EQ(m.median_s, 1.2);
  EXPECT_GT(m.uncertainty, 0.05);
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
  m.name = "matmul f32 64^3";
  Status status = MeasureFigure(Scripted({1}, &calls), MeasureSettings{3, 0.05, 0}, m);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), ::testing::HasSubstr("sampler called 2 times"));
  EXPECT_THAT(status.message(), ::testing::HasSubstr("matmul f32 64^3"));
  // A single run per pass gives no uncertainty: at least 2.
  Status one_run = MeasureFigure(Scripted({1}, &calls), MeasureSettings{1, 0.05, 0}, m);
  EXPECT_THAT(one_run.message(), ::testing::HasSubstr("repeats must be at least 2"));
  EXPECT_FALSE(MeasureFigure(Scripted({1}, &calls), MeasureSettings{2, 0.05, -1}, m).ok());
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
  // 4 dtypes x (2 square + 1 skinny) matmuls, 3 dtypes x 1 conv, 2 elementwise sizes, the kernel
  // launch, 4 collectives x 2 sizes over the 2 devices.
  ASSERT_EQ(db->measurements.size(), 4u * 3 + 3 + 2 + 1 + 4 * 2);
  std::set<std::string> names;
  for (const Measurement& m : db->measurements) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_GT(m.median_s, 0) << m.name;
    EXPECT_GE(m.spread, 0) << m.name;
    EXPECT_DOUBLE_EQ(m.uncertainty, MedianUncertainty(m.runs)) << m.name;
    EXPECT_EQ(m.runs.size(), 3u * (1 + m.retries)) << m.name;
    EXPECT_GT(m.work, 0) << m.name;
  }
  EXPECT_TRUE(names.count("all-reduce f32 4 KiB x2"));
  EXPECT_TRUE(names.count("all-to-all f32 256 KiB x2"));
  const Measurement& launch = db->measurements[4 * 3 + 3 + 2];
  EXPECT_EQ(launch.kind, kKernelLaunchKind);
  EXPECT_EQ(launch.work, 1);  // seconds a kernel: the runtime dispatches one in microseconds
  EXPECT_LT(launch.median_s, 1e-4) << launch.median_s;
  EXPECT_DOUBLE_EQ(db->kernel_launch_s, launch.flagged ? 0 : launch.median_s);
  const Measurement& gather = db->measurements[4 * 3 + 3 + 2 + 1 + 2];
  EXPECT_EQ(gather.kind, "all-gather");
  EXPECT_EQ(gather.shape, (std::vector<int64_t>{2, 1024}));
  EXPECT_EQ(gather.work, 4096);
  EXPECT_EQ(db->devices, 2);
  EXPECT_EQ(db->threads_per_device, ThreadsPerDevice(2));
  EXPECT_FALSE(db->onednn_version.empty());
  EXPECT_TRUE(db->collectives_measured);
  EXPECT_EQ(db->collectives_reason, "");
  EXPECT_EQ(db->placements, 4);
  // The cores' round trip is taken in the rounds too, and kept apart from the figures.
  const int64_t probe = CanTimeCoreRoundTrips() ? 1 : 0;
  EXPECT_EQ(db->core_round_trips_s.empty(), probe == 0);
  for (double seconds : db->core_round_trips_s) EXPECT_GT(seconds, 0);
  // Progress: the samplers prepared ten at a time, then one line per round.
  const std::string total = std::to_string(26 + probe);
  ASSERT_GE(lines.size(), 3u + 3);
  EXPECT_EQ(lines[0], "preparing figures 1 to 10 of " + total);
  EXPECT_EQ(lines[2], "preparing figures 21 to " + total + " of " + total);
  EXPECT_THAT(lines[3], ::testing::StartsWith("round 1/3 of " + total + " figure(s): "));
}

TEST(ProfilerTest, OneDeviceMeasuresNoCollective) {
  ProfileOptions options = QuickProfileOptions();
  options.dtypes = {"f32"};
  options.devices = 1;
  options.placements = 1;
  Result<ProfileDatabase> db = RunProfile(options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (const Measurement& m : db->measurements) {
    EXPECT_TRUE(m.unit == "FLOP" || m.kind == "elementwise" || m.kind == kKernelLaunchKind)
        << m.name;
  }
  EXPECT_FALSE(db->collectives_measured);
  EXPECT_EQ(db->collectives_reason, kCollectivesOneDevice);
  EXPECT_TRUE(db->collectives.empty());
  EXPECT_TRUE(db->core_round_trips_s.empty());  // nothing for it to explain
  EXPECT_EQ(db->placements, 1);
}

TEST(CollectiveTimerTest, TimesEveryKindAndSplitsSizesEvenly) {
  EXPECT_EQ(CollectiveElements(4096, 2), 1024);
  EXPECT_EQ(CollectiveElements(4096, 3), 1023);  // a multiple of 3 for reduce-scatter, all-to-all
  CollectiveTimer timer(3, 2, CollectiveElements(1 << 16, 3));
  EXPECT_EQ(timer.placements(), 2);
  for (int64_t placement = 0; placement < 2; ++placement) {
    for (const std::string& kind : ProfiledCollectives()) {
      Result<double> seconds = timer.Time(kind, CollectiveElements(4096, 3), 5, placement);
      ASSERT_TRUE(seconds.ok()) << kind << ": " << seconds.status().ToString();
      EXPECT_GT(*seconds, 0) << kind;
    }
  }
  Result<double> unknown = timer.Time("all-sum", 1023, 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), ::testing::HasSubstr("'all-sum'"));
  EXPECT_THAT(timer.Time("all-reduce", CollectiveElements(1 << 17, 3), 1).status().message(),
              ::testing::HasSubstr("the timer's buffers hold 0 to 16383"));
  EXPECT_THAT(timer.Time("all-reduce", 3, 1, 2).status().message(),
              ::testing::HasSubstr("placement 2 of 2 placements"));
  // The timer stays usable after a bad command.
  EXPECT_TRUE(timer.Time("all-reduce", 3, 1, 1).ok());
}

TEST(ProfilerTest, BadOptionsAreErrors) {
  ProfileOptions options = QuickProfileOptions();
  options.devices = 0;
  EXPECT_FALSE(RunProfile(options).ok());
  options = QuickProfileOptions();
  options.placements = 0;
  EXPECT_THAT(RunProfile(options).status().message(),
              ::testing::HasSubstr("placements must be at least 1, found 0"));
  options = QuickProfileOptions();
  options.dtypes = {"s32"};
  Result<ProfileDatabase> db = RunProfile(options);
  ASSERT_FALSE(db.ok());
  EXPECT_THAT(db.status().message(), ::testing::HasSubstr("'s32'"));
}

}  // namespace
}  // namespace alpa::runtime
