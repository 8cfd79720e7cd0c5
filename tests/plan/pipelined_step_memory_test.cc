// What a pipeline holds of a stage step (plan/pipelined_step_memory.h), checked against the
// step's own memory model: the inputs the backward reads are held per micro-batch and the others
// are not, and a broadcast the backward reads is not handed over but computed again.
#include "plan/pipelined_step_memory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/zoo.h"
#include "pipeline/stage_slicing.h"
#include "plan/layer_costs.h"

namespace alpa::plan {
namespace {

struct LayerStep {
  StageStep step;
  cost::MemoryModel memory;
  std::vector<const ir::Instruction*> received;  // the activations it received
};

// Layer `layer` of zoo model `name` (-1: its last) as a stage of its own, modelled on one device.
LayerStep BuildLayerStep(const std::string& name, int64_t layer) {
  Result<models::ZooModel> zoo = models::BuildZooModel(name);
  EXPECT_TRUE(zoo.ok()) << zoo.status().ToString();
  const pipeline::ForwardLayers layers = pipeline::LayersFromBoundaries(*zoo->model.loss->entry());
  if (layer < 0) layer = layers.num_layers - 1;
  Result<pipeline::StageLoss> stage =
      pipeline::SliceStageLoss(*zoo->model.loss, zoo->model.weights, layers, layer, layer);
  EXPECT_TRUE(stage.ok()) << stage.status().ToString();
  Result<StageStep> step = BuildStageStep(*stage, zoo->model.weights, zoo->training);
  EXPECT_TRUE(step.ok()) << step.status().ToString();
  cost::MemoryModelOptions options;
  options.parameter_roles = step->roles;
  LayerStep built{std::move(step).value(), {}, {}};
  const ir::Computation& entry = *built.step.step->entry();
  built.memory = cost::BuildMemoryModel(entry, options);
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  for (int64_t p : stage->activations) {
    const int64_t step_parameter = built.step.step_parameter[static_cast<size_t>(p)];
    built.received.push_back(parameters[static_cast<size_t>(step_parameter)]);
  }
  return built;
}

int64_t Bytes(const LayerStep& layer, const std::vector<const ir::Instruction*>& values) {
  int64_t bytes = 0;
  for (const ir::Instruction* value : values) {
    bytes += layer.memory.liveness.BufferOf(value).bytes;
  }
  return bytes;
}

// GPT's LM head reads its input in its backward (dW = x^T dlogits): held per micro-batch.
// Wide-ResNet's classifier reads only the pooled copy of its input: the input is freed with the
// forward, and only the copy is held.
TEST(PipelinedStepMemoryTest, AnInputIsHeldOnlyWhenTheBackwardReadsIt) {
  for (const auto& [name, held] : {std::pair{"gpt-tiny", true}, {"wresnet-tiny", false}}) {
    const LayerStep layer = BuildLayerStep(name, -1);
    ASSERT_FALSE(layer.received.empty()) << name;
    const ir::Computation& entry = *layer.step.step->entry();
    const PipelinedStepMemory without = PipelinedMemoryOf(entry, layer.memory, {}, {}, {});
    const PipelinedStepMemory with = PipelinedMemoryOf(entry, layer.memory, layer.received, {}, {});
    EXPECT_EQ(with.activation_bytes - without.activation_bytes,
              held ? Bytes(layer, layer.received) : 0)
        << name;
    // Freed after its last reader, an input lowers the task's peak or leaves it.
    EXPECT_LE(with.task_peak_bytes, without.task_peak_bytes) << name;
  }
}

// Wide-ResNet's batch norm saves its scale broadcast over the activation, which the stage split
// broadcasts again in the backward from the scale it hands over (spmd/stage_split.h): not held
// per micro-batch, but computed again as the backward starts.
TEST(PipelinedStepMemoryTest, ABroadcastTheBackwardReadsIsComputedAgainNotHandedOver) {
  const LayerStep layer = BuildLayerStep("wresnet-tiny", 0);
  const ir::Computation& entry = *layer.step.step->entry();
  int64_t broadcasts = 0;
  for (size_t t = 0; t < layer.memory.values.size(); ++t) {
    if (layer.memory.values[t].category == cost::MemoryCategory::kSavedActivations &&
        layer.memory.liveness.order[t]->opcode() == ir::Opcode::kBroadcast) {
      broadcasts += layer.memory.liveness.buffers[t].bytes;
    }
  }
  ASSERT_GT(broadcasts, 0);
  const PipelinedStepMemory held = PipelinedMemoryOf(entry, layer.memory, {}, {}, {});
  EXPECT_LE(held.activation_bytes, layer.memory.saved_activation_bytes - broadcasts);
  EXPECT_GE(held.recomputed_bytes, broadcasts);
}

}  // namespace
}  // namespace alpa::plan
