// Automatic layers written as markers: the markers give every parameter-dependent instruction
// the clustering's layer, the loss keeps its value, and the result slices into stages.
#include "pipeline/layer_marking.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "ir/layer_boundary.h"
#include "ir/verifier.h"
#include "models/zoo.h"
#include "pipeline/layer_construction.h"
#include "pipeline/stage_slicing.h"
#include "zoo_models.h"

namespace alpa::pipeline {
namespace {

using ::testing::HasSubstr;
using testing::Zoo;

int64_t CountMarkers(const ir::Computation& computation) {
  int64_t markers = 0;
  for (const auto& instruction : computation.instructions()) {
    markers += ir::AsLayerBoundary(*instruction).has_value();
  }
  return markers;
}

TEST(LayerMarkingTest, MarkersGiveEveryInstructionItsClusteredLayer) {
  models::ZooModel gpt = Zoo("gpt-tiny");
  ir::Computation& loss = *gpt.model.loss->entry();
  const int64_t own_markers = CountMarkers(loss);
  ASSERT_GT(own_markers, 0);
  // One layer: the model's markers go and none come.
  Result<LayerMarkingStats> stripped = MarkAutoLayers(loss, 1);
  ASSERT_TRUE(stripped.ok()) << stripped.status().ToString();
  EXPECT_EQ(stripped->removed, own_markers);
  EXPECT_EQ(stripped->inserted, 0);
  EXPECT_EQ(CountMarkers(loss), 0);

  const std::vector<ir::Instruction*> order = loss.MakePostOrder();
  Result<std::vector<int64_t>> clustered = ClusterComputationIntoLayers(loss, 3);
  ASSERT_TRUE(clustered.ok());
  std::map<const ir::Instruction*, int64_t> clustered_layer;
  std::map<const ir::Instruction*, bool> reads_parameter;
  for (size_t t = 0; t < order.size(); ++t) {
    clustered_layer[order[t]] = (*clustered)[t];
    bool reads = order[t]->opcode() == ir::Opcode::kParameter;
    for (const ir::Instruction* operand : order[t]->operands()) {
      reads = reads || reads_parameter.at(operand);
    }
    reads_parameter[order[t]] = reads;
  }

  Result<LayerMarkingStats> marked = MarkAutoLayers(loss, 3);
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  EXPECT_EQ(marked->removed, 0);
  EXPECT_GT(marked->inserted, 0);
  EXPECT_EQ(CountMarkers(loss), marked->inserted);
  EXPECT_TRUE(ir::VerifyModule(*gpt.model.loss).ok());
  const ForwardLayers layers = LayersFromBoundaries(loss);
  EXPECT_EQ(layers.num_layers, 3);
  const std::vector<ir::Instruction*> marked_order = loss.MakePostOrder();
  int64_t compared = 0;
  for (size_t t = 0; t < marked_order.size(); ++t) {
    const ir::Instruction* instruction = marked_order[t];
    if (!clustered_layer.contains(instruction) || !reads_parameter.at(instruction)) continue;
    if (instruction->opcode() == ir::Opcode::kParameter) continue;  // joins its first reader
    EXPECT_EQ(layers.layer_of[t], clustered_layer.at(instruction)) << instruction->name();
    ++compared;
  }
  EXPECT_GT(compared, 100);
}

TEST(LayerMarkingTest, TheLossKeepsItsValueAndEveryLayerSlices) {
  models::ZooModel gpt = Zoo("gpt-tiny");
  const std::vector<ir::Literal> inputs =
      interp::RandomArguments(*gpt.model.loss->entry(), /*seed=*/3);
  Result<ir::Literal> before = interp::EvaluateModule(*gpt.model.loss, inputs);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_TRUE(MarkAutoLayers(*gpt.model.loss->entry(), 3).ok());
  Result<ir::Literal> after = interp::EvaluateModule(*gpt.model.loss, inputs);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(before->GetDouble(0), after->GetDouble(0));
  const ForwardLayers layers = LayersFromBoundaries(*gpt.model.loss->entry());
  for (int64_t k = 0; k < layers.num_layers; ++k) {
    Result<StageLoss> stage = SliceStageLoss(*gpt.model.loss, gpt.model.weights, layers, k, k);
    ASSERT_TRUE(stage.ok()) << "layer " << k << ": " << stage.status().ToString();
    EXPECT_FALSE(stage->weights.empty()) << "layer " << k;
  }
}

TEST(LayerMarkingTest, DeterministicText) {
  models::ZooModel a = Zoo("mlp-tiny");
  models::ZooModel b = Zoo("mlp-tiny");
  ASSERT_TRUE(MarkAutoLayers(*a.model.loss->entry(), 2).ok());
  ASSERT_TRUE(MarkAutoLayers(*b.model.loss->entry(), 2).ok());
  EXPECT_EQ(hlo::PrintModule(*a.model.loss), hlo::PrintModule(*b.model.loss));
}

TEST(LayerMarkingTest, BadInputIsNamed) {
  models::ZooModel mlp = Zoo("mlp-tiny");
  Result<LayerMarkingStats> too_many = MarkAutoLayers(*mlp.model.loss->entry(), 100000);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);

  Result<std::unique_ptr<ir::Module>> backward = hlo::ParseHloModule(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ct = f32[4] custom-call(x), custom_call_target="alpa_layer_boundary", frontend_attributes={layer="0",pass="backward"}
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(ct, zero), dimensions={0}, to_apply=add
}
)");
  ASSERT_TRUE(backward.ok()) << backward.status().ToString();
  Result<LayerMarkingStats> refused = MarkAutoLayers(*(*backward)->entry(), 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("%ct: a backward layer boundary"));
}

}  // namespace
}  // namespace alpa::pipeline
