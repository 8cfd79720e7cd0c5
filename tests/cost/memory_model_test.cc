#include "cost/memory_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autodiff/train_step.h"
#include "models/zoo.h"
#include "test_util.h"

namespace alpa::cost {
namespace {

using testing::ParseVerified;

// A train step by hand: loss = sum(tanh(x w)) with a layer boundary after x w, a stand-in
// backward d = t t, dh = its backward marker, dw = x^T dh (the gradient), and an update of w and
// its one state array m. f32[8,2] = 64 bytes, f32[2,2] = 16.
constexpr char kTinyStep[] = R"(
HloModule step
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,2] parameter(2)
  w = f32[2,2] parameter(0)
  h = f32[8,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  m0 = f32[8,2] custom-call(h), custom_call_target="alpa_layer_boundary", frontend_attributes={layer="0",pass="forward"}
  t = f32[8,2] tanh(m0)
  c0 = f32[] constant(0)
  loss = f32[] reduce(t, c0), dimensions={0,1}, to_apply=add, frontend_attributes={alpa_value="loss"}
  d = f32[8,2] multiply(t, t)
  dh = f32[8,2] custom-call(d), custom_call_target="alpa_layer_boundary", frontend_attributes={layer="0",pass="backward"}
  dw = f32[2,2] dot(x, dh), lhs_contracting_dims={0}, rhs_contracting_dims={0}, frontend_attributes={alpa_value="gradient"}
  w2 = f32[2,2] subtract(w, dw)
  m = f32[2,2] parameter(1)
  m2 = f32[2,2] add(m, dw)
  ROOT r = (f32[], f32[2,2], f32[2,2]) tuple(loss, w2, m2)
})";

MemoryModelOptions TinyRoles() {
  MemoryModelOptions options;
  options.parameter_roles = {ParameterRole::kWeight, ParameterRole::kOptimizerState,
                             ParameterRole::kBatch};
  return options;
}

TEST(MemoryModelTest, PassesLayersAndCategoriesOfAHandWrittenStep) {
  auto module = ParseVerified(kTinyStep);
  ASSERT_NE(module, nullptr);
  const MemoryModel model = BuildMemoryModel(*module->entry(), TinyRoles());
  const ir::Computation& entry = *module->entry();
  auto info = [&](const char* name) {
    return model.values[static_cast<size_t>(model.liveness.StepOf(entry.GetInstruction(name)))];
  };
  for (const char* name : {"h", "m0", "t", "c0", "loss"}) {
    EXPECT_EQ(info(name).pass, Pass::kForward) << name;
  }
  for (const char* name : {"d", "dh", "dw"}) EXPECT_EQ(info(name).pass, Pass::kBackward) << name;
  for (const char* name : {"w2", "m2", "r", "x", "w", "m"}) {
    EXPECT_EQ(info(name).pass, Pass::kOther) << name;
  }
  // h feeds marker 0 (layer 0); the marker's value and what follows it are layer 1.
  EXPECT_EQ(info("h").layer, 0);
  EXPECT_EQ(info("m0").layer, 1);
  EXPECT_EQ(info("t").layer, 1);
  EXPECT_EQ(model.num_layers, 2);
  // t is computed from x and read by the backward d: saved. h and m0 are read by the forward
  // only: temporaries.
  EXPECT_EQ(info("t").category, MemoryCategory::kSavedActivations);
  EXPECT_EQ(info("h").category, MemoryCategory::kTemporaries);
  EXPECT_EQ(info("m0").category, MemoryCategory::kTemporaries);
  EXPECT_EQ(info("dw").category, MemoryCategory::kGradients);
  EXPECT_EQ(info("x").category, MemoryCategory::kBatch);
  EXPECT_EQ(model.saved_activation_bytes, 64);
  EXPECT_EQ(model.gradient_bytes, 16);
  EXPECT_EQ(model.StaticBytes(), 16 + 16 + 16);
  EXPECT_EQ(model.SavedActivationBytesPerMicroBatch(1, 2), 64);
  EXPECT_EQ(model.SavedActivationBytesPerMicroBatch(0, 1), 0);
}

TEST(MemoryModelTest, BreakdownAtThePeak) {
  // Post order x, w, h, m0, t, c0, loss, d, dh, dw, w2, m, m2, r; parameters 16 + 16 + 64 = 96.
  //   step 7 (d): 96 + t 64 + loss 4 + d 64 = 228, the first step at the peak
  //   (step 3: 96 + h + m0 = 224; step 8: 96 + loss + d + dh = 228 too, later)
  // At step 7: weights 16, optimizer state 16, batch 64, saved t 64, temporaries loss + d = 68.
  auto module = ParseVerified(kTinyStep);
  ASSERT_NE(module, nullptr);
  const MemoryModel model = BuildMemoryModel(*module->entry(), TinyRoles());
  EXPECT_EQ(model.liveness.peak_bytes, 228);
  EXPECT_EQ(model.liveness.order[static_cast<size_t>(model.liveness.peak_step)]->name(), "d");
  const MemoryBreakdown& peak = model.at_peak;
  EXPECT_EQ(peak[MemoryCategory::kWeights], 16);
  EXPECT_EQ(peak[MemoryCategory::kOptimizerState], 16);
  EXPECT_EQ(peak[MemoryCategory::kBatch], 64);
  EXPECT_EQ(peak[MemoryCategory::kSavedActivations], 64);
  EXPECT_EQ(peak[MemoryCategory::kTemporaries], 68);
  EXPECT_EQ(peak[MemoryCategory::kGradients], 0);
  EXPECT_EQ(peak[MemoryCategory::kOtherParameters], 0);
  EXPECT_EQ(peak.total(), 228);
}

TEST(MemoryModelTest, WithoutRolesOrTagsEverythingIsOtherOrTemporary) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = s32[4] parameter(0)
  a = s32[4] negate(p)
  ROOT b = s32[4] abs(a)
})");
  ASSERT_NE(module, nullptr);
  const MemoryModel model = BuildMemoryModel(*module->entry());
  EXPECT_EQ(model.at_peak[MemoryCategory::kOtherParameters], 16);
  EXPECT_EQ(model.at_peak[MemoryCategory::kTemporaries], 32);
  EXPECT_EQ(model.at_peak.total(), model.liveness.peak_bytes);
  for (const ValueInfo& value : model.values) EXPECT_EQ(value.pass, Pass::kOther);
  EXPECT_EQ(model.num_layers, 1);
}

// A zoo model's train step and its memory model, with the step's parameter roles.
struct ZooStep {
  std::unique_ptr<ir::Module> step;
  MemoryModel model;
  int64_t weight_bytes = 0;  // of the step's (f32 master) weights
};

ParameterRole RoleOf(autodiff::StepParameter kind) {
  switch (kind) {
    case autodiff::StepParameter::kWeight:
      return ParameterRole::kWeight;
    case autodiff::StepParameter::kOptimizerState:
      return ParameterRole::kOptimizerState;
    case autodiff::StepParameter::kBatch:
      return ParameterRole::kBatch;
    case autodiff::StepParameter::kSharedState:
      break;
  }
  return ParameterRole::kOther;
}

// `batch` is the loss's (one micro-batch's); 0 keeps the zoo's, as does `layers` 0.
ZooStep BuildZooStep(const std::string& name, int64_t batch, bool remat = false,
                     int64_t micro_batches = 1, int64_t layers = 0) {
  models::ZooOverrides overrides;
  if (batch > 0) overrides.batch = batch;
  if (layers > 0) overrides.layers = layers;
  Result<models::ZooModel> zoo = models::BuildZooModel(name, overrides);
  EXPECT_TRUE(zoo.ok()) << zoo.status().message();
  autodiff::TrainStepOptions training = zoo->training;
  training.remat = remat;
  training.num_micro_batches = micro_batches;
  const models::Model& model = zoo->model;
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*model.loss, model.weights, training);
  EXPECT_TRUE(step.ok()) << step.status().message();
  ZooStep out;
  out.step = std::move(step).value();
  MemoryModelOptions options;
  options.num_micro_batches = micro_batches;
  for (autodiff::StepParameter kind :
       autodiff::StepParameterLayout(*model.loss, model.weights, training)) {
    options.parameter_roles.push_back(RoleOf(kind));
  }
  const std::vector<ir::Instruction*> parameters = out.step->entry()->parameters();
  for (size_t i = 0; i < model.weights.size(); ++i) {
    out.weight_bytes += parameters[i]->shape().ByteSize();
  }
  out.model = BuildMemoryModel(*out.step->entry(), options);
  return out;
}

TEST(MemoryModelTest, GptTinyTrainStepBreakdown) {
  const ZooStep gpt = BuildZooStep("gpt-tiny", 8);
  const MemoryModel& model = gpt.model;
  EXPECT_GT(gpt.weight_bytes, 0);
  EXPECT_EQ(model.at_peak[MemoryCategory::kWeights], gpt.weight_bytes);
  EXPECT_EQ(model.at_peak[MemoryCategory::kOptimizerState], 2 * gpt.weight_bytes);  // AdamW
  EXPECT_EQ(model.gradient_bytes, gpt.weight_bytes);              // one gradient per weight
  EXPECT_EQ(model.at_peak[MemoryCategory::kOtherParameters], 4);  // the f32 step counter
  // tokens and labels, s32[8,16] each
  EXPECT_EQ(model.at_peak[MemoryCategory::kBatch], 2 * 8 * 16 * 4);
  EXPECT_GT(model.saved_activation_bytes, 0);
  EXPECT_EQ(model.at_peak.total(), model.liveness.peak_bytes);
  // Embedding, 2 blocks, head. The blocks are alike: their activations are equal and the sum of
  // all layers is everything saved.
  EXPECT_EQ(model.num_layers, 4);
  EXPECT_GT(model.SavedActivationBytesPerMicroBatch(1, 2), 0);
  EXPECT_EQ(model.SavedActivationBytesPerMicroBatch(1, 2),
            model.SavedActivationBytesPerMicroBatch(2, 3));
  EXPECT_EQ(model.SavedActivationBytesPerMicroBatch(0, 4), model.saved_activation_bytes);
}

TEST(MemoryModelTest, SavedActivationsGrowWithTheBatch) {
  const ZooStep small = BuildZooStep("gpt-tiny", 4);
  const ZooStep large = BuildZooStep("gpt-tiny", 8);
  EXPECT_GT(small.model.saved_activation_bytes, 0);
  // Every saved activation has the batch as a dimension: twice the batch, twice the bytes.
  EXPECT_EQ(large.model.saved_activation_bytes, 2 * small.model.saved_activation_bytes);
  EXPECT_EQ(large.model.at_peak[MemoryCategory::kWeights],
            small.model.at_peak[MemoryCategory::kWeights]);
}

TEST(MemoryModelTest, RematSavesOnlyWhatCrossesLayers) {
  const ZooStep plain = BuildZooStep("gpt-tiny", 8);
  const ZooStep remat = BuildZooStep("gpt-tiny", 8, /*remat=*/true);
  EXPECT_LT(remat.model.saved_activation_bytes, plain.model.saved_activation_bytes);
  // A block keeps only its input, f32[8,16,32] = 16 KiB (the head, not recomputed, keeps its
  // own).
  EXPECT_EQ(remat.model.SavedActivationBytesPerMicroBatch(1, 2), 8 * 16 * 32 * 4);
  EXPECT_LT(remat.model.liveness.peak_bytes, plain.model.liveness.peak_bytes);
}

// The schedule (the program's order) recomputes each layer just before its backward pass, so the
// working values at the peak are one layer's whatever the depth; only the saved layer inputs
// grow. (A depth-first order from the root recomputed every layer at the start of the backward
// pass and kept all of it live.)
TEST(MemoryModelTest, RematRecomputesOneLayerAtATime) {
  const ZooStep two = BuildZooStep("gpt-tiny", 512, /*remat=*/true, 1, /*layers=*/2);
  const ZooStep eight = BuildZooStep("gpt-tiny", 512, /*remat=*/true, 1, /*layers=*/8);
  EXPECT_EQ(eight.model.at_peak[MemoryCategory::kTemporaries],
            two.model.at_peak[MemoryCategory::kTemporaries]);
  EXPECT_EQ(eight.model.at_peak[MemoryCategory::kSavedActivations],
            4 * two.model.at_peak[MemoryCategory::kSavedActivations]);
  EXPECT_EQ(eight.model.values[static_cast<size_t>(eight.model.liveness.peak_step)].pass,
            Pass::kBackward);
}

TEST(MemoryModelTest, MicroBatchesDivideTheActivations) {
  // Two micro-batches of 4 unrolled: per micro-batch, a block saves what it saves at batch 4.
  const ZooStep one = BuildZooStep("gpt-tiny", 4);
  const ZooStep two = BuildZooStep("gpt-tiny", 4, /*remat=*/false, /*micro_batches=*/2);
  EXPECT_EQ(two.model.num_micro_batches, 2);
  EXPECT_EQ(two.model.SavedActivationBytesPerMicroBatch(1, 3),
            one.model.SavedActivationBytesPerMicroBatch(1, 3));
  EXPECT_EQ(two.model.gradient_bytes, one.model.gradient_bytes);
}

TEST(MemoryModelTest, MlpTinyWithAdamHasTwoStateArraysPerWeight) {
  const ZooStep mlp = BuildZooStep("mlp-tiny", 0);
  ASSERT_EQ(models::BuildZooModel("mlp-tiny")->training.optimizer.kind,
            autodiff::OptimizerKind::kAdam);
  EXPECT_EQ(mlp.model.at_peak[MemoryCategory::kWeights], mlp.weight_bytes);
  EXPECT_EQ(mlp.model.at_peak[MemoryCategory::kOptimizerState],
            mlp.model.at_peak[MemoryCategory::kWeights] * 2);
  EXPECT_EQ(mlp.model.gradient_bytes, mlp.weight_bytes);
  EXPECT_GT(mlp.model.saved_activation_bytes, 0);
}

}  // namespace
}  // namespace alpa::cost
