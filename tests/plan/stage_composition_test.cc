// Stage costs by composition against the same stage planned whole, as the runtime plans it
// (plan/stage_composition.h): every range of two or more layers of gpt, moe and wresnet models
// on every mesh configuration of one host of 4 V100s. Prints one line per stage, the ratio of the
// composed time of a micro-batch's forward and backward plus the step's update to the whole
// stage's.
#include "plan/stage_composition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "models/zoo.h"
#include "tests/plan/plan_test_util.h"

namespace alpa::plan {
namespace {

using testing::Cluster;

struct CompositionCase {
  std::string model;
  std::optional<int64_t> layers;
  int64_t micro_batch_size = 0;
};

void PrintTo(const CompositionCase& c, std::ostream* out) { *out << c.model; }

double StepSeconds(const StageFigures& stage) {
  return stage.forward_s + stage.backward_s + stage.update_s;
}

class StageCompositionTest : public ::testing::TestWithParam<CompositionCase> {};

TEST_P(StageCompositionTest, ComposedStagesCostWhatWholeStagesDo) {
  const CompositionCase& param = GetParam();
  const cluster::ClusterSpec cluster = Cluster("p3.16xlarge:1x4");
  models::ZooOverrides overrides;
  overrides.layers = param.layers;
  overrides.batch = param.micro_batch_size;
  Result<models::ZooModel> model = models::BuildZooModel(param.model, overrides);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::vector<MeshConfig> configs = EnumerateMeshConfigs(
      cluster, cluster::EnumerateSubmeshes(cluster), param.micro_batch_size, LogicalSpace::kAll);
  Result<LayerCostTable> table =
      ComputeLayerCosts(*model->model.loss, model->model.weights, model->training, cluster, configs,
                        param.micro_batch_size, LayerCostOptions{});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_GE(table->num_layers, 3);

  std::vector<double> ratios;
  for (size_t c = 0; c < configs.size(); ++c) {
    for (int64_t first = 0; first < table->num_layers; ++first) {
      for (int64_t last = first + 1; last < table->num_layers; ++last) {
        const StageFigures composed = ComposeStage(*table, first, last, static_cast<int64_t>(c));
        ASSERT_TRUE(composed.fits);
        Result<StageFigures> whole =
            PlanWholeStage(*model->model.loss, model->model.weights, model->training, cluster,
                           *table, static_cast<int64_t>(c), first, last, {});
        ASSERT_TRUE(whole.ok()) << whole.status().ToString();
        const double ratio = StepSeconds(composed) / StepSeconds(*whole);
        ratios.push_back(ratio);
        std::printf(
            "%-14s %-18s layers %2lld..%-2lld composed %8.3f ms (boundaries %6.3f) "
            "whole %8.3f ms  %.3f\n",
            param.model.c_str(), MeshConfigName(configs[c]).c_str(), static_cast<long long>(first),
            static_cast<long long>(last), StepSeconds(composed) * 1e3, composed.boundary_s * 1e3,
            StepSeconds(*whole) * 1e3, ratio);
        // Measured bounds (docs/pipeshard.md, "Stage costs by composition"): no stage priced
        // more than 3% above its whole plan nor more than 10% below; most within 2%.
        EXPECT_GT(ratio, 0.90) << MeshConfigName(configs[c]) << " layers " << first << ".." << last;
        EXPECT_LT(ratio, 1.03) << MeshConfigName(configs[c]) << " layers " << first << ".." << last;
      }
    }
  }
  const int64_t within =
      std::count_if(ratios.begin(), ratios.end(), [](double r) { return std::abs(r - 1) <= 0.02; });
  const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
  std::printf("%s: %lld of %zu stages within 2%%, ratios %.3f to %.3f\n", param.model.c_str(),
              static_cast<long long>(within), ratios.size(), *low, *high);
}

INSTANTIATE_TEST_SUITE_P(Zoo, StageCompositionTest,
                         ::testing::Values(CompositionCase{"gpt-350m", 2, 8},
                                           CompositionCase{"moe-380m", 2, 8},
                                           CompositionCase{"wresnet-250m", 14, 8}),
                         [](const ::testing::TestParamInfo<CompositionCase>& info) {
                           std::string name = info.param.model;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace alpa::plan
