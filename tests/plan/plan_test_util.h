// Shared by the plan tests: gpt-tiny's layer costs on one host of p3.16xlarge with 4 devices.
#ifndef ALPA_TESTS_PLAN_PLAN_TEST_UTIL_H_
#define ALPA_TESTS_PLAN_PLAN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "cluster/presets.h"
#include "models/zoo.h"
#include "pipeline/layer_marking.h"
#include "plan/layer_costs.h"

namespace alpa::plan::testing {

inline cluster::ClusterSpec Cluster(const std::string& argument) {
  Result<cluster::ClusterSpec> spec = cluster::ParseClusterArgument(argument);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return std::move(spec).value();
}

// gpt-tiny at micro-batch size 8, its layer costs on every configuration of `cluster`; with
// `remat`, each layer's backward pass recomputes its forward; with `auto_layers` > 0, its
// operators clustered into that many layers in place of its own (pipeline/layer_marking.h).
inline LayerCostTable GptTinyCosts(const cluster::ClusterSpec& cluster, bool remat = false,
                                   int64_t auto_layers = 0) {
  Result<models::ZooModel> gpt = models::BuildZooModel("gpt-tiny");  // batch 8
  EXPECT_TRUE(gpt.ok()) << gpt.status().ToString();
  gpt->training.remat = remat;
  if (auto_layers > 0) {
    EXPECT_TRUE(pipeline::MarkAutoLayers(*gpt->model.loss->entry(), auto_layers).ok());
  }
  constexpr int64_t kMicroBatchSize = 8;
  const std::vector<MeshConfig> configs = EnumerateMeshConfigs(
      cluster, cluster::EnumerateSubmeshes(cluster), kMicroBatchSize, LogicalSpace::kAll);
  Result<LayerCostTable> table = ComputeLayerCosts(
      *gpt->model.loss, gpt->model.weights, gpt->training, cluster, configs, kMicroBatchSize, {});
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return std::move(table).value();
}

}  // namespace alpa::plan::testing

#endif  // ALPA_TESTS_PLAN_PLAN_TEST_UTIL_H_
