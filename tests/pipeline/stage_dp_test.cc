#include "pipeline/stage_dp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>

namespace alpa::pipeline {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void Set(StageCostTable& table, int64_t first, int64_t last, int64_t submesh, int64_t config,
         double time_s, int64_t max_successors) {
  table.time_s[table.Index(first, last, submesh, config)] = time_s;
  table.max_successors[table.Index(first, last, submesh, config)] = max_successors;
}

// The smallest sum + (B - 1) · max over every plan: every cut of the layers into contiguous stages,
// every (sub-mesh, config) per stage, all devices of every pool used, stage k of S with S - 1 - k
// successors allowed by its max_successors. +inf when there is none.
double BruteForceLatency(const StageCostTable& table, std::vector<int64_t> pools,
                         int num_micro_batches) {
  double best = kInf;
  std::vector<size_t> chosen;  // table indices of the stages so far
  auto pool_of = [&](size_t m) { return table.submesh_pools.empty() ? 0 : table.submesh_pools[m]; };
  std::function<void(int64_t)> extend = [&](int64_t first) {
    if (first == table.num_layers) {
      if (std::any_of(pools.begin(), pools.end(), [](int64_t left) { return left != 0; })) return;
      const int64_t num_stages = static_cast<int64_t>(chosen.size());
      double sum = 0;
      double max = 0;
      for (int64_t k = 0; k < num_stages; ++k) {
        if (num_stages - 1 - k > table.max_successors[chosen[k]]) return;
        sum += table.time_s[chosen[k]];
        max = std::max(max, table.time_s[chosen[k]]);
      }
      best = std::min(best, sum + (num_micro_batches - 1) * max);
      return;
    }
    for (int64_t last = first; last < table.num_layers; ++last) {
      for (size_t m = 0; m < table.submesh_devices.size(); ++m) {
        int64_t& left = pools[pool_of(m)];
        if (table.submesh_devices[m] > left) continue;
        for (int64_t c = 0; c < table.num_configs; ++c) {
          const size_t index = table.Index(first, last, static_cast<int64_t>(m), c);
          if (table.time_s[index] == kInf) continue;
          chosen.push_back(index);
          left -= table.submesh_devices[m];
          extend(last + 1);
          left += table.submesh_devices[m];
          chosen.pop_back();
        }
      }
    }
  };
  extend(0);
  return best;
}

// Alpa's training_dp as written (alpa.md 2.b): every distinct stage time as t_max, ascending,
// until t_max · B >= best, with F over exact stage counts; no epsilon gap.
double AlpaEnumerationLatency(const StageCostTable& table, int64_t num_devices,
                              int num_micro_batches) {
  const int64_t num_layers = table.num_layers;
  std::vector<double> times;
  for (double t : table.time_s) {
    if (t < kInf) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const int64_t rows = num_layers + 1;
  const int64_t cols = num_devices + 1;
  double best = kInf;
  for (double t_max : times) {
    if (t_max * num_micro_batches >= best) break;
    std::vector<double> sum(rows * rows * cols, kInf);
    std::vector<double> max(sum.size(), 0.0);
    auto at = [&](int64_t s, int64_t l, int64_t d) { return (s * rows + l) * cols + d; };
    sum[at(0, num_layers, 0)] = 0;
    for (int64_t s = 1; s <= num_layers; ++s) {
      for (int64_t l = num_layers - 1; l >= 0; --l) {
        for (int64_t i = l; i < num_layers; ++i) {
          for (int64_t d = 1; d <= num_devices; ++d) {
            for (size_t m = 0; m < table.submesh_devices.size(); ++m) {
              const int64_t rest = d - table.submesh_devices[m];
              if (rest < 0) continue;
              for (int64_t c = 0; c < table.num_configs; ++c) {
                const size_t index = table.Index(l, i, static_cast<int64_t>(m), c);
                const double t = table.time_s[index];
                if (s - 1 > table.max_successors[index] || t > t_max) continue;
                const double candidate = sum[at(s - 1, i + 1, rest)] + t;
                if (candidate < sum[at(s, l, d)]) {
                  sum[at(s, l, d)] = candidate;
                  max[at(s, l, d)] = std::max(max[at(s - 1, i + 1, rest)], t);
                }
              }
            }
          }
        }
      }
    }
    for (int64_t s = 1; s <= num_layers; ++s) {
      const int64_t cell = at(s, 0, num_devices);
      if (sum[cell] < kInf) best = std::min(best, sum[cell] + (num_micro_batches - 1) * max[cell]);
    }
  }
  return best;
}

// Every candidate is a plan the brute force would accept, with the latency it reports, and the
// candidates are distinct and sorted.
void ExpectValidCandidates(const StageCostTable& table, const StageDpOptions& options,
                           const StageDpResult& result) {
  ASSERT_LE(static_cast<int64_t>(result.candidates.size()), options.max_candidates);
  for (size_t p = 0; p < result.candidates.size(); ++p) {
    const StagePlanCandidate& plan = result.candidates[p];
    const int64_t num_stages = static_cast<int64_t>(plan.stages.size());
    int64_t next_layer = 0;
    int64_t devices = 0;
    double sum = 0;
    double max = 0;
    for (int64_t k = 0; k < num_stages; ++k) {
      const DpStage& stage = plan.stages[k];
      ASSERT_EQ(stage.first_layer, next_layer) << "plan " << p << " stage " << k;
      ASSERT_GE(stage.last_layer, stage.first_layer);
      next_layer = stage.last_layer + 1;
      const size_t index =
          table.Index(stage.first_layer, stage.last_layer, stage.submesh, stage.config);
      EXPECT_EQ(stage.time_s, table.time_s[index]);
      EXPECT_LE(num_stages - 1 - k, table.max_successors[index]) << "plan " << p << " stage " << k;
      devices += table.submesh_devices[stage.submesh];
      sum += stage.time_s;
      max = std::max(max, stage.time_s);
    }
    EXPECT_EQ(next_layer, table.num_layers) << "plan " << p;
    EXPECT_EQ(devices, options.num_devices) << "plan " << p;
    EXPECT_NEAR(plan.latency_s, sum + (options.num_micro_batches - 1) * max,
                1e-12 * plan.latency_s);
    if (p > 0) {
      EXPECT_LE(result.candidates[p - 1].latency_s, plan.latency_s);
      const auto& previous = result.candidates[p - 1].stages;
      const bool same = std::equal(previous.begin(), previous.end(), plan.stages.begin(),
                                   plan.stages.end(), [](const DpStage& a, const DpStage& b) {
                                     return a.first_layer == b.first_layer &&
                                            a.last_layer == b.last_layer &&
                                            a.submesh == b.submesh && a.config == b.config;
                                   });
      EXPECT_FALSE(same) << "plan " << p << " repeats the one before";
    }
  }
}

// Random tables: times uniform in [0.1, 10] (or small integers, for ties), some +inf; memory
// either abundant or random max_successors in [-1, L].
StageCostTable RandomTable(std::mt19937& rng, int64_t num_layers,
                           std::vector<int64_t> submesh_devices, int64_t num_configs,
                           bool integer_times) {
  StageCostTable table = StageCostTable::Make(num_layers, submesh_devices, num_configs);
  const bool abundant_memory = rng() % 2 == 0;
  std::uniform_real_distribution<double> time(0.1, 10.0);
  for (int64_t l = 0; l < num_layers; ++l) {
    for (int64_t i = l; i < num_layers; ++i) {
      for (int64_t m = 0; m < static_cast<int64_t>(submesh_devices.size()); ++m) {
        for (int64_t c = 0; c < num_configs; ++c) {
          const double t = rng() % 7 == 0  ? kInf
                           : integer_times ? static_cast<double>(1 + rng() % 4)
                                           : time(rng);
          const int64_t successors = abundant_memory
                                         ? (rng() % 10 == 0 ? -1 : num_layers)
                                         : static_cast<int64_t>(rng() % (num_layers + 2)) - 1;
          Set(table, l, i, m, c, t, successors);
        }
      }
    }
  }
  return table;
}

// Tables shaped like profiled ones: layers of random work, configs whose communication grows
// with the mesh (so pipelining pays for large B), memory for more successors on bigger meshes and
// shorter stages. Their best plans lie between the loosest and the tightest bound.
StageCostTable ScalingTable(std::mt19937& rng, int64_t num_layers,
                            std::vector<int64_t> submesh_devices, int64_t num_configs) {
  StageCostTable table = StageCostTable::Make(num_layers, submesh_devices, num_configs);
  std::uniform_real_distribution<double> work(0.5, 1.5);
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  std::vector<double> layer_work(num_layers);
  for (double& w : layer_work) w = work(rng);
  const double memory = 0.3 * num_layers;
  for (int64_t l = 0; l < num_layers; ++l) {
    double range_work = 0;
    for (int64_t i = l; i < num_layers; ++i) {
      range_work += layer_work[i];
      for (size_t m = 0; m < submesh_devices.size(); ++m) {
        const double devices = static_cast<double>(submesh_devices[m]);
        for (int64_t c = 0; c < num_configs; ++c) {
          const double communication = 0.01 * (c + 1) * devices;
          const double time = range_work / devices * (1 + communication) * noise(rng);
          const double successors = std::floor(memory * devices / (range_work * (1 + c % 2))) - 1;
          Set(table, l, i, static_cast<int64_t>(m), c, time,
              static_cast<int64_t>(std::min(successors, static_cast<double>(num_layers))));
        }
      }
    }
  }
  return table;
}

// Solves `table` and checks the best plan against the brute force over `pools`, and every
// candidate's validity. The result, or nothing when no plan exists (and the DP agrees).
std::optional<StageDpResult> SolveAndCompareWithBruteForce(const StageCostTable& table,
                                                           const StageDpOptions& options,
                                                           const std::vector<int64_t>& pools) {
  const double expected = BruteForceLatency(table, pools, options.num_micro_batches);
  Result<StageDpResult> result = SolveStageDp(table, options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok()) return std::nullopt;
  if (expected == kInf) {
    EXPECT_TRUE(result->candidates.empty());
    return std::nullopt;
  }
  EXPECT_FALSE(result->candidates.empty());
  if (result->candidates.empty()) return std::nullopt;
  EXPECT_NEAR(result->candidates[0].latency_s, expected, 1e-9 * expected);
  ExpectValidCandidates(table, options, *result);
  return std::move(result).value();
}

TEST(StageDpTest, EqualsBruteForceOnSmallRandomInstances) {
  std::mt19937 rng(20220711);
  const std::vector<std::vector<int64_t>> submesh_sets = {{1, 2, 4}, {1, 2}, {2, 1, 4}, {1}};
  int feasible = 0;
  for (int instance = 0; instance < 3000; ++instance) {
    const int64_t num_layers = 1 + rng() % 5;
    const StageCostTable table =
        RandomTable(rng, num_layers, submesh_sets[rng() % submesh_sets.size()], 1 + rng() % 3,
                    /*integer_times=*/instance % 3 == 0);
    const StageDpOptions options{.num_devices = int64_t{2} << (rng() % 3),
                                 .num_micro_batches = static_cast<int>(1 + rng() % 8),
                                 .epsilon_s = 0,
                                 .max_candidates = 4};
    SCOPED_TRACE("instance " + std::to_string(instance));
    if (SolveAndCompareWithBruteForce(table, options, {options.num_devices})) ++feasible;
  }
  EXPECT_GT(feasible, 1000);  // the instances exercise the DP, not only its infeasible exit
}

// Two pools (a heterogeneous cluster's host types): each sub-mesh draws from one, and every device
// of both is used.
TEST(StageDpTest, EqualsBruteForceWithTwoDevicePools) {
  std::mt19937 rng(20261124);
  int feasible = 0;
  for (int instance = 0; instance < 1500; ++instance) {
    const int64_t num_layers = 1 + rng() % 5;
    StageCostTable table = RandomTable(rng, num_layers, {1, 2, 4, 1, 2}, 1 + rng() % 2,
                                       /*integer_times=*/instance % 3 == 0);
    table.submesh_pools = {0, 0, 0, 1, 1};
    const std::vector<int64_t> pools = {int64_t{1} << (rng() % 3), int64_t{1} << (rng() % 2)};
    const StageDpOptions options{.num_devices = pools[0] + pools[1],
                                 .devices_per_pool = pools,
                                 .num_micro_batches = static_cast<int>(1 + rng() % 8),
                                 .epsilon_s = 0,
                                 .max_candidates = 4};
    SCOPED_TRACE("instance " + std::to_string(instance));
    const std::optional<StageDpResult> result =
        SolveAndCompareWithBruteForce(table, options, pools);
    if (!result) continue;
    ++feasible;
    for (const StagePlanCandidate& plan : result->candidates) {
      std::vector<int64_t> used(2, 0);
      for (const DpStage& stage : plan.stages) {
        used[static_cast<size_t>(table.submesh_pools[static_cast<size_t>(stage.submesh)])] +=
            table.submesh_devices[static_cast<size_t>(stage.submesh)];
      }
      EXPECT_EQ(used, pools);
    }
  }
  EXPECT_GT(feasible, 300);
}

// Where every sub-mesh with a candidate stage is a multiple of g devices (here the 1- and 2-device
// sub-meshes have none, or there are none), the DP counts devices in units of g: the same best
// plan as the brute force over single devices, also with a pool of 12 (units of 2 or 4 at most).
TEST(StageDpTest, EqualsBruteForceWhenDevicesCountInUnits) {
  std::mt19937 rng(20261130);
  int feasible = 0;
  for (int instance = 0; instance < 1500; ++instance) {
    const int64_t num_layers = 1 + rng() % 4;
    const bool six = instance % 2 == 0;
    const std::vector<int64_t> submeshes =
        six ? std::vector<int64_t>{1, 2, 6, 4} : std::vector<int64_t>{1, 2, 4, 8};
    StageCostTable table = RandomTable(rng, num_layers, submeshes, 1 + rng() % 2,
                                       /*integer_times=*/instance % 3 == 0);
    const int64_t without = 1 + rng() % 2;  // sub-meshes 0 .. without-1 get no candidates
    for (int64_t l = 0; l < num_layers; ++l) {
      for (int64_t i = l; i < num_layers; ++i) {
        for (int64_t m = 0; m < without; ++m) {
          for (int64_t c = 0; c < table.num_configs; ++c) Set(table, l, i, m, c, kInf, -1);
        }
      }
    }
    const int64_t devices = six ? 12 : int64_t{4} << (rng() % 2);
    const StageDpOptions options{.num_devices = devices,
                                 .num_micro_batches = static_cast<int>(1 + rng() % 8),
                                 .epsilon_s = 0,
                                 .max_candidates = 4};
    SCOPED_TRACE("instance " + std::to_string(instance));
    if (SolveAndCompareWithBruteForce(table, options, {devices})) ++feasible;
  }
  EXPECT_GT(feasible, 300);
}

TEST(StageDpTest, EqualsAlpasEnumerationOnMediumInstances) {
  // Up to 8 stages on 16 devices: more stage counts and bounds than the brute force reaches.
  std::mt19937 rng(1707);
  for (int instance = 0; instance < 80; ++instance) {
    const StageCostTable table = instance % 2 == 0
                                     ? RandomTable(rng, 8, {1, 2, 4, 8}, 3, instance % 4 == 0)
                                     : ScalingTable(rng, 8, {1, 2, 4, 8}, 3);
    const StageDpOptions options{
        .num_devices = 16, .num_micro_batches = static_cast<int>(1 + rng() % 16), .epsilon_s = 0};
    const double expected =
        AlpaEnumerationLatency(table, options.num_devices, options.num_micro_batches);
    Result<StageDpResult> result = SolveStageDp(table, options);
    ASSERT_TRUE(result.ok()) << result.status().message();
    SCOPED_TRACE("instance " + std::to_string(instance));
    if (expected == kInf) {
      EXPECT_TRUE(result->candidates.empty());
      continue;
    }
    ASSERT_FALSE(result->candidates.empty());
    EXPECT_NEAR(result->candidates[0].latency_s, expected, 1e-9 * expected);
    ExpectValidCandidates(table, options, *result);
  }
}

TEST(StageDpTest, EpsilonGapCostsAtMostBMinusOneEpsilon) {
  // Times on a 0.01 grid with a gap of 0.05: bounds within the gap are skipped, the answer may
  // lose at most (B - 1) · epsilon.
  std::mt19937 rng(7);
  for (int instance = 0; instance < 500; ++instance) {
    StageCostTable table = RandomTable(rng, 1 + rng() % 5, {1, 2, 4}, 2, false);
    for (double& t : table.time_s) t = std::round(t * 100) / 100;
    const StageDpOptions options{
        .num_devices = 4, .num_micro_batches = static_cast<int>(1 + rng() % 8), .epsilon_s = 0.05};
    const double expected =
        BruteForceLatency(table, {options.num_devices}, options.num_micro_batches);
    Result<StageDpResult> result = SolveStageDp(table, options);
    ASSERT_TRUE(result.ok()) << result.status().message();
    if (expected == kInf) continue;
    ASSERT_FALSE(result->candidates.empty());
    EXPECT_LE(result->candidates[0].latency_s,
              expected + (options.num_micro_batches - 1) * options.epsilon_s + 1e-9);
  }
}

// 2 layers on 2 devices (sub-meshes of 1 and 2 devices): each layer takes 1 on one device; both
// layers on the 2-device mesh take `two_device_time`. With B = 4: one stage per device costs
// 1 + 1 + 3 · 1 = 5, one 2-device stage 4 · two_device_time.
StageCostTable TwoLayersTwoDevices(double two_device_time) {
  StageCostTable table = StageCostTable::Make(2, {1, 2}, 1);
  Set(table, 0, 0, 0, 0, 1.0, 1);
  Set(table, 1, 1, 0, 0, 1.0, 1);
  Set(table, 0, 1, 0, 0, 2.0, 1);
  Set(table, 0, 0, 1, 0, 0.6, 1);
  Set(table, 1, 1, 1, 0, 0.6, 1);
  Set(table, 0, 1, 1, 0, two_device_time, 1);
  return table;
}

TEST(StageDpTest, PipelinesTwoLayersWhenTheTwoDeviceStageScalesPoorly) {
  Result<StageDpResult> result =
      SolveStageDp(TwoLayersTwoDevices(1.6), {.num_devices = 2, .num_micro_batches = 4});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->candidates.size(), 2u);  // the 2-device stage (6.4) is the runner-up
  const StagePlanCandidate& best = result->candidates[0];
  ASSERT_EQ(best.stages.size(), 2u);
  EXPECT_EQ(best.stages[0].last_layer, 0);
  EXPECT_EQ(best.stages[0].submesh, 0);
  EXPECT_EQ(best.stages[1].first_layer, 1);
  EXPECT_EQ(best.stages[1].submesh, 0);
  EXPECT_DOUBLE_EQ(best.latency_s, 5.0);
  EXPECT_DOUBLE_EQ(result->candidates[1].latency_s, 6.4);
}

TEST(StageDpTest, KeepsTwoLayersTogetherWhenTheTwoDeviceStageScalesWell) {
  Result<StageDpResult> result =
      SolveStageDp(TwoLayersTwoDevices(1.2), {.num_devices = 2, .num_micro_batches = 4});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_FALSE(result->candidates.empty());
  const StagePlanCandidate& best = result->candidates[0];
  ASSERT_EQ(best.stages.size(), 1u);
  EXPECT_EQ(best.stages[0].last_layer, 1);
  EXPECT_EQ(best.stages[0].submesh, 1);
  EXPECT_DOUBLE_EQ(best.latency_s, 4.8);
}

TEST(StageDpTest, AStageThatFitsOnlyLastEndsUpLast) {
  // Each layer on one device: config 0 takes 1 but only fits with no stage after it (its
  // successors' activations would not fit), config 1 takes 2 and fits anywhere. The fast config
  // can only be the second stage's: 2 + 1 + (B - 1) · 2.
  StageCostTable table = StageCostTable::Make(2, {1}, 2);
  for (int64_t layer = 0; layer < 2; ++layer) {
    Set(table, layer, layer, 0, 0, 1.0, 0);
    Set(table, layer, layer, 0, 1, 2.0, 1);
  }
  Result<StageDpResult> result = SolveStageDp(table, {.num_devices = 2, .num_micro_batches = 3});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_FALSE(result->candidates.empty());
  const StagePlanCandidate& best = result->candidates[0];
  ASSERT_EQ(best.stages.size(), 2u);
  EXPECT_EQ(best.stages[0].config, 1);
  EXPECT_EQ(best.stages[1].config, 0);
  EXPECT_DOUBLE_EQ(best.latency_s, 7.0);
}

TEST(StageDpTest, InfeasibleInstancesGiveNoCandidates) {
  // Sub-meshes of 2 devices cannot use 3 devices exactly.
  StageCostTable even = StageCostTable::Make(2, {2}, 1);
  Set(even, 0, 0, 0, 0, 1.0, 5);
  Set(even, 1, 1, 0, 0, 1.0, 5);
  Set(even, 0, 1, 0, 0, 2.0, 5);
  Result<StageDpResult> result = SolveStageDp(even, {.num_devices = 3});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->candidates.empty());

  // No stage fits in memory.
  StageCostTable full = StageCostTable::Make(2, {1}, 1);
  Set(full, 0, 1, 0, 0, 1.0, -1);
  result = SolveStageDp(full, {.num_devices = 1});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->candidates.empty());
}

TEST(StageDpTest, BadInputErrorsNameTheField) {
  const StageCostTable good = TwoLayersTwoDevices(1.2);
  const StageDpOptions options{.num_devices = 2};
  auto expect_error = [](const Result<StageDpResult>& result, const std::string& field) {
    ASSERT_FALSE(result.ok()) << field;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(field), std::string::npos)
        << result.status().message();
  };
  StageCostTable table = good;
  table.num_layers = 0;
  expect_error(SolveStageDp(table, options), "num_layers");
  table = good;
  table.submesh_devices = {};
  expect_error(SolveStageDp(table, options), "submesh_devices");
  table = good;
  table.submesh_devices[1] = 0;
  expect_error(SolveStageDp(table, options), "submesh_devices[1]");
  table = good;
  table.num_configs = 0;
  expect_error(SolveStageDp(table, options), "num_configs");
  table = good;
  table.time_s.pop_back();
  expect_error(SolveStageDp(table, options), "time_s");
  table = good;
  table.max_successors.push_back(0);
  expect_error(SolveStageDp(table, options), "max_successors");
  table = good;
  table.time_s[table.Index(0, 1, 1, 0)] = std::nan("");
  expect_error(SolveStageDp(table, options), "time_s[0][1][1][0]");
  table = good;
  table.time_s[table.Index(1, 1, 0, 0)] = -1;
  expect_error(SolveStageDp(table, options), "time_s[1][1][0][0]");
  table = good;
  table.max_successors[table.Index(0, 0, 0, 0)] = -2;
  expect_error(SolveStageDp(table, options), "max_successors[0][0][0][0]");
  expect_error(SolveStageDp(good, {.num_devices = 0}), "num_devices");
  expect_error(SolveStageDp(good, {.num_devices = 2, .num_micro_batches = 0}), "num_micro_batches");
  expect_error(SolveStageDp(good, {.num_devices = 2, .epsilon_s = kInf}), "epsilon_s");
  expect_error(SolveStageDp(good, {.num_devices = 2, .max_candidates = 0}), "max_candidates");
  expect_error(SolveStageDp(good, {.num_devices = 3, .devices_per_pool = {1, 1}}),
               "devices_per_pool sums to 2, num_devices is 3");
  StageCostTable pooled = good;
  pooled.submesh_pools.assign(good.submesh_devices.size(), 1);
  expect_error(SolveStageDp(pooled, {.num_devices = 2}), "submesh_pools[0] is 1");
  pooled.submesh_pools = {0, 0, 0};
  expect_error(SolveStageDp(pooled, {.num_devices = 2}), "submesh_pools has 3 entries");
}

TEST(StageDpTest, SolvesAnAlpaSizedInstance) {
  // L = 64 layers, sub-meshes of 1, 2, .., 64 devices, 5 configs, D = 64.
  std::mt19937 rng(64);
  const StageCostTable table = ScalingTable(rng, 64, {1, 2, 4, 8, 16, 32, 64}, 5);
  const StageDpOptions options{.num_devices = 64, .num_micro_batches = 16};
  Result<StageDpResult> result = SolveStageDp(table, options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_FALSE(result->candidates.empty());
  ExpectValidCandidates(table, options, *result);
  EXPECT_GT(result->candidates[0].stages.size(), 1u);
}

TEST(StageDpTest, SameInputSameOutput) {
  std::mt19937 rng(3);
  const StageCostTable table = RandomTable(rng, 8, {1, 2, 4}, 3, /*integer_times=*/true);
  const StageDpOptions options{.num_devices = 8, .num_micro_batches = 4};
  Result<StageDpResult> first = SolveStageDp(table, options);
  Result<StageDpResult> second = SolveStageDp(table, options);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_FALSE(first->candidates.empty());
  EXPECT_EQ(first->t_max_values_tried, second->t_max_values_tried);
  ASSERT_EQ(first->candidates.size(), second->candidates.size());
  for (size_t p = 0; p < first->candidates.size(); ++p) {
    const StagePlanCandidate& a = first->candidates[p];
    const StagePlanCandidate& b = second->candidates[p];
    EXPECT_EQ(a.latency_s, b.latency_s);
    ASSERT_EQ(a.stages.size(), b.stages.size());
    for (size_t k = 0; k < a.stages.size(); ++k) {
      EXPECT_EQ(a.stages[k].first_layer, b.stages[k].first_layer);
      EXPECT_EQ(a.stages[k].last_layer, b.stages[k].last_layer);
      EXPECT_EQ(a.stages[k].submesh, b.stages[k].submesh);
      EXPECT_EQ(a.stages[k].config, b.stages[k].config);
    }
  }
}

}  // namespace
}  // namespace alpa::pipeline
