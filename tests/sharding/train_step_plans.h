// Shared helpers of the end-to-end auto-sharding tests (auto_sharding_test.cc and
// alpa_oracles_test.cc): the zoo's training steps with the values each step hands the next,
// AutoShard of them as `alpa plan` plans a train step, and the chosen layouts and collectives read
// back for assertions and failure messages.
#ifndef ALPA_TESTS_SHARDING_TRAIN_STEP_PLANS_H_
#define ALPA_TESTS_SHARDING_TRAIN_STEP_PLANS_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/train_step.h"
#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "cost/collective_cost.h"
#include "models/gpt.h"
#include "models/mlp.h"
#include "sharding/auto_sharding.h"
#include "sharding/parallel_methods.h"

namespace alpa::sharding::testing {

// A training step and, for each entry parameter the step updates, the instruction computing the
// value the next step reads in its place (AutoShardingOptions::next_values), found as `alpa plan`
// finds them (tools/alpa/plan_command.cc, MethodParameters). Without them nothing ties a weight's
// layout to its update's, and the solver can read a weight whole while handing its update back
// split: the next step's gather is never paid, and Megatron's pattern does not come out.
struct TrainStep {
  std::unique_ptr<ir::Module> module;
  std::map<std::string, std::string> next_values;
};

inline TrainStep BuildStep(const models::Model& model, const autodiff::TrainStepOptions& options) {
  Result<std::unique_ptr<ir::Module>> module =
      autodiff::BuildTrainStep(*model.loss, model.weights, options);
  EXPECT_TRUE(module.ok()) << module.status().message();
  TrainStep step{std::move(module).value(), {}};
  const std::vector<autodiff::StepParameter> layout =
      autodiff::StepParameterLayout(*model.loss, model.weights, options);
  // The roles only choose a parallel method's pins; the next values do not need them.
  Result<std::vector<MethodParameter>> parameters =
      StepParameters(*step.module->entry(), {}, autodiff::StepNextValueElements(layout));
  EXPECT_TRUE(parameters.ok()) << parameters.status().message();
  for (const MethodParameter& parameter : *parameters) {
    if (!parameter.next_value.empty()) step.next_values[parameter.name] = parameter.next_value;
  }
  return step;
}

// The zoo's MLP with input, hidden and output all of width `hidden` and `layers` hidden layers:
// weights layer0.w .. layer{layers-1}.w, then out.w (and the biases .b), inputs x and y.
inline TrainStep MlpTrainStep(int64_t batch, int64_t hidden, int64_t layers,
                              const autodiff::TrainStepOptions& options = {}) {  // Adam by default
  models::MlpConfig config;
  config.batch = batch;
  config.input = hidden;
  config.hidden = hidden;
  config.output = hidden;
  config.layers = layers;
  Result<models::Model> model = models::BuildMlp(config);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return BuildStep(*model, options);
}

// One GPT layer (models/gpt.h names: layer0.attn.qkv.w, layer0.attn.out.w, layer0.fc1.w,
// layer0.fc2.w, ...), f32, Adam, with a vocabulary unlike the hidden size so that the logits'
// collectives are not counted as a block's.
inline TrainStep GptTrainStep(int64_t batch, int64_t seq, int64_t hidden,
                              const autodiff::TrainStepOptions& options = {}) {
  models::GptConfig config;
  config.batch = batch;
  config.seq = seq;
  config.hidden = hidden;
  config.layers = 1;
  config.heads = 16;
  config.vocab = 1024;
  Result<models::Model> model = models::BuildGpt(config);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return BuildStep(*model, options);
}

struct Planned {
  std::unique_ptr<ir::Module> module;
  std::map<std::string, std::string> next_values;
  ShardingSolution solution;
};

inline cluster::LogicalMesh WholeMesh(const cluster::ClusterSpec& cluster,
                                      const std::vector<int64_t>& mesh_shape) {
  Result<cluster::LogicalMesh> mesh =
      cluster::MakeLogicalMesh(cluster, cluster::WholeClusterMesh(cluster), mesh_shape);
  EXPECT_TRUE(mesh.ok()) << mesh.status().message();
  return std::move(mesh).value();
}

// AutoShard of the step with its next values (as `alpa plan` plans every train step).
inline Planned Plan(TrainStep step, const cluster::ClusterSpec& cluster,
                    const std::vector<int64_t>& mesh_shape, AutoShardingOptions options = {}) {
  options.solve.time_limit_s = 20;
  options.solve.effort = 200'000;
  options.next_values = step.next_values;
  Result<ShardingSolution> solution =
      AutoShard(*step.module->entry(), cluster, WholeMesh(cluster, mesh_shape), options);
  EXPECT_TRUE(solution.ok()) << solution.status().message();
  return Planned{std::move(step.module), std::move(step.next_values), std::move(solution).value()};
}

inline Planned Plan(TrainStep step, const std::string& cluster_argument,
                    const std::vector<int64_t>& mesh_shape) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument(cluster_argument);
  EXPECT_TRUE(cluster.ok());
  return Plan(std::move(step), *cluster, mesh_shape);
}

// The chosen output layout of the instruction named `name` (replicated, and a test failure, when
// there is no such instruction).
inline ShardingSpec OutputShardingSpec(const Planned& planned, const std::string& name) {
  const ir::Instruction* instruction = planned.module->entry()->GetInstruction(name);
  const int64_t node = instruction == nullptr ? -1 : planned.solution.graph.NodeOf(*instruction);
  if (node < 0) {
    ADD_FAILURE() << "no instruction " << name;
    return ShardingSpec::Replicated(0);
  }
  return planned.solution.Chosen(node).output[0];
}

// The same as text: "[R,S0]".
inline std::string OutputSpec(const Planned& planned, const std::string& name) {
  return ToString(OutputShardingSpec(planned, name));
}

// The chosen spec of the entry parameter `name`, and of the value the next step reads in its
// place.
inline std::string ParameterSpec(const Planned& planned, const std::string& name) {
  return OutputSpec(planned, name);
}
inline std::string NextValueSpec(const Planned& planned, const std::string& name) {
  auto it = planned.next_values.find(name);
  if (it == planned.next_values.end()) {
    ADD_FAILURE() << "no next value of " << name;
    return "";
  }
  return OutputSpec(planned, it->second);
}

// For failure messages: every array parameter's layout and its next value's, and the
// collectives by kind.
inline std::string Describe(const Planned& planned) {
  std::string text;
  for (const ir::Instruction* parameter : planned.module->entry()->parameters()) {
    if (!parameter->shape().IsArray()) continue;
    text += "\n  " + parameter->name() + " " + ParameterSpec(planned, parameter->name());
    if (planned.next_values.contains(parameter->name())) {
      text += " -> " + NextValueSpec(planned, parameter->name());
    }
  }
  const ShardingEstimate& estimate = planned.solution.estimate;
  for (const auto& [kind, count] : estimate.communication.count) {
    text += "\n  " + std::string(cost::CollectiveKindName(kind)) + " x" + std::to_string(count);
  }
  text += "\n  communication " + std::to_string(estimate.communication.seconds) + " s, compute " +
          std::to_string(estimate.compute_seconds) + " s";
  return text;
}

inline int64_t Count(const ShardingEstimate& estimate, cost::CollectiveKind kind) {
  auto it = estimate.communication.count.find(kind);
  return it == estimate.communication.count.end() ? 0 : it->second;
}

// The GPT layer's block weights, whose updates every plan of it keeps in the weights' layouts.
inline const std::vector<std::string> kGptBlockWeights = {"layer0.attn.qkv.w", "layer0.attn.out.w",
                                                          "layer0.fc1.w", "layer0.fc2.w"};

}  // namespace alpa::sharding::testing

#endif  // ALPA_TESTS_SHARDING_TRAIN_STEP_PLANS_H_
