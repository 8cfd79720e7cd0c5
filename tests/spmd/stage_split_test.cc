// The cut of a stage's train step into forward, backward and update (spmd/stage_split.h), on a
// hand-built step:
//   y  = tanh(x . w)                      forward: sent on
//   l  = sum(y)                           forward: the loss
//   s  = broadcast(l)                     forward, read by the backward: recomputed there
//   dy = ct * (1 - y * y) + s             backward (depends on the cotangent)
//   dw = x^T . dy                         the weight's gradient (tagged)
//   w' = w - 0.1 * dw                     update
#include "spmd/stage_split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlo/printer.h"
#include "ir/builder.h"
#include "ir/value_tag.h"

namespace alpa::spmd {
namespace {

using ir::DType;
using ir::Instruction;
using ir::Shape;

struct Step {
  std::unique_ptr<ir::Module> module;
  StageRoles roles;
};

// Parameters: w f32[4,3] (weight), x f32[2,4] (batch), ct f32[2,3] (cotangent of y).
// Results: (w', y, l). With `update_reads_forward`, w' also subtracts y's sum (a forward value the
// update may not read).
Step BuildStep(bool update_reads_forward = false) {
  ir::ModuleBuilder mb("stage");
  ir::ComputationBuilder b = mb.NewComputation("train_step");
  Instruction* w = b.Parameter(0, Shape::Array(DType::kF32, {4, 3}), "w");
  Instruction* x = b.Parameter(1, Shape::Array(DType::kF32, {2, 4}), "x");
  Instruction* ct = b.Parameter(2, Shape::Array(DType::kF32, {2, 3}), "ct");
  Instruction* y = b.Tanh(b.MatMul(x, w));
  Instruction* total = b.Sum(y, {0, 1});
  Instruction* spread = b.Broadcast(total, {2, 3}, {});
  Instruction* one = b.Broadcast(b.ConstantScalar(DType::kF32, 1), {2, 3}, {});
  Instruction* dy = b.Add(b.Multiply(ct, b.Subtract(one, b.Multiply(y, y))), spread);
  Instruction* dw = b.MatMul(b.Transpose(x, {1, 0}), dy);
  ir::SetValueTag(*dw, ir::ValueTag::kGradient);
  Instruction* step = b.Multiply(dw, b.Broadcast(b.ConstantScalar(DType::kF32, 0.1), {4, 3}, {}));
  Instruction* next = b.Subtract(w, step);
  if (update_reads_forward) next = b.Subtract(next, b.Broadcast(total, {4, 3}, {}));
  Step built;
  built.module = mb.Build(b.Build(b.Tuple({next, y, total})).value()).value();
  built.roles.parameters = {StageParameter::kWeight, StageParameter::kBatch,
                            StageParameter::kCotangent};
  built.roles.next_value_leaves = {0};
  built.roles.sent_leaves = {1};
  built.roles.loss_leaf = 2;
  return built;
}

std::vector<PartInput::Kind> KindsOf(const StagePart& part) {
  std::vector<PartInput::Kind> kinds;
  for (const PartInput& input : part.inputs) kinds.push_back(input.kind);
  return kinds;
}

TEST(StageSplitTest, CutsTheStepIntoItsThreePasses) {
  const Step step = BuildStep();
  Result<StageSplit> split = SplitStageProgram(*step.module, step.roles);
  ASSERT_TRUE(split.ok()) << split.status().message();
  using Kind = PartInput::Kind;
  // Forward: w and x in; y and the loss out, and the residuals: y (for 1 - y*y) and the loss,
  // not its broadcast, which the backward recomputes.
  EXPECT_EQ(split->forward.inputs,
            (std::vector<PartInput>{{Kind::kParameter, 0}, {Kind::kParameter, 1}}));
  EXPECT_EQ(split->num_residuals, 2);
  const ir::Instruction* forward_root = split->forward.module->entry()->root();
  ASSERT_EQ(forward_root->operand_count(), 4);  // y, the loss, then the residuals
  EXPECT_EQ(forward_root->operand(1)->opcode(), ir::Opcode::kReduce);
  for (int64_t r = 2; r < 4; ++r) {
    EXPECT_NE(forward_root->operand(r)->opcode(), ir::Opcode::kBroadcast);
  }
  // Backward: x and ct, then the residuals; out, the tagged gradient.
  EXPECT_EQ(KindsOf(split->backward), (std::vector<Kind>{Kind::kParameter, Kind::kParameter,
                                                         Kind::kResidual, Kind::kResidual}));
  EXPECT_EQ(split->backward.inputs[1], (PartInput{Kind::kParameter, 2}));
  EXPECT_EQ(split->num_gradients, 1);
  ASSERT_EQ(split->gradient_names.size(), 1u);
  EXPECT_EQ(split->backward.module->entry()->root()->operand_count(), 1);
  // Update: w and the gradient; out, w'.
  EXPECT_EQ(split->update.inputs,
            (std::vector<PartInput>{{Kind::kParameter, 0}, {Kind::kGradient, 0}}));
  EXPECT_EQ(split->update.module->entry()->root()->operand_count(), 1);
  // The three programs print and hold no parameter beyond their inputs.
  for (const StagePart* part : {&split->forward, &split->backward, &split->update}) {
    EXPECT_EQ(part->module->entry()->parameter_count(), static_cast<int64_t>(part->inputs.size()));
    EXPECT_FALSE(hlo::PrintModule(*part->module).empty());
  }
}

TEST(StageSplitTest, AnUpdateReadingAForwardValueIsAnError) {
  const Step step = BuildStep(/*update_reads_forward=*/true);
  Result<StageSplit> split = SplitStageProgram(*step.module, step.roles);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("update pass reads"), std::string::npos)
      << split.status().message();
}

TEST(StageSplitTest, RolesThatDoNotMatchTheProgramAreNamed) {
  Step step = BuildStep();
  step.roles.parameters.pop_back();
  Result<StageSplit> split = SplitStageProgram(*step.module, step.roles);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("3 parameters, its roles list 2"), std::string::npos);
  step = BuildStep();
  step.roles.sent_leaves = {5};
  split = SplitStageProgram(*step.module, step.roles);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("result leaf 5 is out of range"), std::string::npos);
}

}  // namespace
}  // namespace alpa::spmd
