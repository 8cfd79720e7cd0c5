// Train steps: one exact SGD and Adam update worked by hand, AdamW's decoupled decay, and
// training that drives a solvable regression's loss down.
#include "autodiff/train_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "interp/evaluator.h"
#include "training_loop.h"

namespace alpa::autodiff {
namespace {

using ir::DType;
using ir::Instruction;
using ir::Literal;
using ::testing::HasSubstr;
using testing::RunSteps;
using testing::StartTraining;

ir::Shape F64(std::vector<int64_t> dims) { return ir::Shape::Array(DType::kF64, dims); }
Literal Values(std::vector<int64_t> dims, std::vector<double> values) {
  return Literal::FromDoubles(F64(std::move(dims)), values);
}

// loss(w f64[2], b f64[], x f64[rows,2], y f64[rows]) = mean((x w + b - y)^2).
std::unique_ptr<ir::Module> Regression(int64_t rows = 4) {
  ir::ModuleBuilder mb("regression");
  ir::ComputationBuilder b = mb.NewComputation("loss");
  Instruction* w = b.Parameter(0, F64({2}), "w");
  Instruction* bias = b.Parameter(1, F64({}), "b");
  Instruction* x = b.Parameter(2, F64({rows, 2}), "x");
  Instruction* y = b.Parameter(3, F64({rows}), "y");
  Instruction* error = b.Subtract(b.Add(b.MatMul(x, w), b.Broadcast(bias, {rows}, {})), y);
  Instruction* sum = b.Reduce(b.Multiply(error, error), b.ConstantScalar(DType::kF64, 0), {0},
                              mb.ScalarReducer(ir::Opcode::kAdd, DType::kF64));
  Result<ir::Computation*> entry =
      b.Build(b.Divide(sum, b.ConstantScalar(DType::kF64, static_cast<double>(rows))));
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*entry);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return std::move(module).value();
}

// y = x [1, 2] exactly, so the loss can reach 0.
const Literal kX = Values({4, 2}, {1, 0, 0, 1, 1, 1, 2, 1});
const Literal kY = Values({4}, {1, 2, 3, 4});

std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetDouble(i));
  return values;
}

Literal Step(const ir::Module& step, std::vector<Literal> arguments) {
  Result<Literal> result = interp::EvaluateModule(step, std::move(arguments));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : Literal();
}

TEST(TrainStepTest, SgdStepByHand) {
  // At w = 0, b = 0: error = -y, loss = (1 + 4 + 9 + 16) / 4 = 7.5;
  // dw = (2/4) sum_i error_i x_i = -0.5 [12, 9] = [-6, -4.5]; db = 0.5 sum error = -5.
  // lr 0.1: w' = [0.6, 0.45], b' = 0.5, step 0 -> 1.
  Result<std::unique_ptr<ir::Module>> step = BuildTrainStep(
      *Regression(), {0, 1}, {.optimizer = {.kind = OptimizerKind::kSgd, .learning_rate = 0.1}});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  Literal r = Step(**step, {Values({2}, {0, 0}), Values({}, {0}), Values({}, {0}), kX, kY});
  ASSERT_EQ(r.tuple_elements().size(), 4u);  // loss, w', b', step'
  EXPECT_DOUBLE_EQ(r.tuple_element(0).GetDouble(0), 7.5);
  EXPECT_THAT(Doubles(r.tuple_element(1)),
              ::testing::ElementsAre(::testing::DoubleEq(0.6), ::testing::DoubleEq(0.45)));
  EXPECT_DOUBLE_EQ(r.tuple_element(2).GetDouble(0), 0.5);
  EXPECT_EQ(r.tuple_element(3).GetDouble(0), 1);
}

TEST(TrainStepTest, InputGradientsFollowTheStepCount) {
  // As SgdStepByHand, also returning dloss/dx = (2/4) error w^T = 0 at w = 0, and dloss/dy =
  // -(2/4) error = 0.5 y.
  Result<std::unique_ptr<ir::Module>> step =
      BuildTrainStep(*Regression(), {0, 1},
                     {.optimizer = {.kind = OptimizerKind::kSgd, .learning_rate = 0.1}}, {3, 2});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  Literal r = Step(**step, {Values({2}, {0, 0}), Values({}, {0}), Values({}, {0}), kX, kY});
  ASSERT_EQ(r.tuple_elements().size(), 6u);  // loss, w', b', step', dy, dx
  EXPECT_THAT(Doubles(r.tuple_element(4)), ::testing::ElementsAre(0.5, 1, 1.5, 2));
  EXPECT_THAT(Doubles(r.tuple_element(5)), ::testing::Each(0.0));
  EXPECT_DOUBLE_EQ(r.tuple_element(1).GetDouble(0), 0.6);

  Result<std::unique_ptr<ir::Module>> weight = BuildTrainStep(*Regression(), {0, 1}, {}, {0});
  ASSERT_FALSE(weight.ok());
  EXPECT_THAT(weight.status().message(), HasSubstr("input gradient 0: not a batch parameter"));
  TrainStepOptions two_micro_batches;
  two_micro_batches.num_micro_batches = 2;
  Result<std::unique_ptr<ir::Module>> micro =
      BuildTrainStep(*Regression(), {0, 1}, two_micro_batches, {2});
  ASSERT_FALSE(micro.ok());
  EXPECT_THAT(micro.status().message(), HasSubstr("one micro-batch"));
}

TEST(TrainStepTest, AdamFirstStepByHand) {
  // First step, t = 1: m = 0.1 g, v = 0.001 g^2, m^ = g, v^ = g^2, so p' = p - lr g / (|g| + eps).
  // With dw = [-6, -4.5], db = -5 and lr 0.1, every weight moves by +0.1 (to ~1e-9).
  Result<std::unique_ptr<ir::Module>> step = BuildTrainStep(
      *Regression(), {0, 1}, {.optimizer = {.kind = OptimizerKind::kAdam, .learning_rate = 0.1}});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  // Parameters: w, b, w.m, w.v, b.m, b.v, step, x, y.
  Literal r =
      Step(**step, {Values({2}, {0, 0}), Values({}, {0}), Values({2}, {0, 0}), Values({2}, {0, 0}),
                    Values({}, {0}), Values({}, {0}), Values({}, {0}), kX, kY});
  ASSERT_EQ(r.tuple_elements().size(), 8u);  // loss, w', b', w.m', w.v', b.m', b.v', step'
  EXPECT_NEAR(r.tuple_element(1).GetDouble(0), 0.1, 1e-9);
  EXPECT_NEAR(r.tuple_element(1).GetDouble(1), 0.1, 1e-9);
  EXPECT_NEAR(r.tuple_element(2).GetDouble(0), 0.1, 1e-9);
  EXPECT_THAT(Doubles(r.tuple_element(3)),
              ::testing::Pointwise(::testing::DoubleNear(1e-12), std::vector<double>{-0.6, -0.45}));
  EXPECT_THAT(
      Doubles(r.tuple_element(4)),
      ::testing::Pointwise(::testing::DoubleNear(1e-12), std::vector<double>{0.036, 0.02025}));
  EXPECT_EQ(r.tuple_element(7).GetDouble(0), 1);
}

TEST(TrainStepTest, AdamWDecaysWeightsApartFromTheGradient) {
  // Same state and gradient: AdamW's w' differs from Adam's by exactly lr * wd * w.
  const OptimizerConfig adam = {.kind = OptimizerKind::kAdam, .learning_rate = 0.1};
  OptimizerConfig adamw = adam;
  adamw.kind = OptimizerKind::kAdamW;
  adamw.weight_decay = 0.01;
  std::vector<Literal> arguments = {Values({2}, {1, -2}),
                                    Values({}, {0}),
                                    Values({2}, {0, 0}),
                                    Values({2}, {0, 0}),
                                    Values({}, {0}),
                                    Values({}, {0}),
                                    Values({}, {0}),
                                    kX,
                                    kY};
  Literal plain = Step(**BuildTrainStep(*Regression(), {0, 1}, {.optimizer = adam}), arguments);
  Literal decayed = Step(**BuildTrainStep(*Regression(), {0, 1}, {.optimizer = adamw}), arguments);
  EXPECT_NEAR(plain.tuple_element(1).GetDouble(0) - decayed.tuple_element(1).GetDouble(0),
              0.1 * 0.01 * 1, 1e-12);
  EXPECT_NEAR(plain.tuple_element(1).GetDouble(1) - decayed.tuple_element(1).GetDouble(1),
              0.1 * 0.01 * -2, 1e-12);
}

TEST(TrainStepTest, TrainingDrivesTheLossDown) {
  for (OptimizerConfig config :
       {OptimizerConfig{.kind = OptimizerKind::kSgd, .learning_rate = 0.05, .momentum = 0.9},
        OptimizerConfig{.kind = OptimizerKind::kAdam, .learning_rate = 0.05},
        OptimizerConfig{.kind = OptimizerKind::kAdafactor, .learning_rate = 0.05}}) {
    SCOPED_TRACE(static_cast<int>(config.kind));
    // Adafactor's steps are relative (lr · rms(p)) and unit-size per element, so from w = 0 it
    // starts slowly and ends circling the optimum in a band of about lr · rms(w): a 20x drop.
    const double drop = config.kind == OptimizerKind::kAdafactor ? 0.05 : 0.01;
    Result<std::unique_ptr<ir::Module>> step =
        BuildTrainStep(*Regression(), {0, 1}, {.optimizer = config});
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    testing::Training training = StartTraining({Values({2}, {0, 0}), Values({}, {0})}, config);
    const std::vector<double> losses = RunSteps(**step, training, {kX, kY}, 200);
    ASSERT_EQ(losses.size(), 200u);
    EXPECT_LT(losses.back(), drop * losses.front());
  }
}

TEST(TrainStepTest, NextValuesFollowTheParameterLayout) {
  // Two weights, Adam (two moments each), a step count and two batch parameters: the result is
  // (loss, W0', W1', m0', v0', m1', v1', t + 1), so parameter i becomes element i + 1.
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::kAdam;
  const std::vector<StepParameter> layout = StepParameterLayout(*Regression(), {0, 1}, options);
  ASSERT_EQ(layout.size(), 9u);
  EXPECT_EQ(layout[6], StepParameter::kSharedState);
  EXPECT_EQ(StepNextValueElements(layout), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, -1, -1}));
}

TEST(TrainStepTest, BadWeightListsAreErrors) {
  const OptimizerConfig sgd = {.kind = OptimizerKind::kSgd};
  EXPECT_THAT(BuildTrainStep(*Regression(), {}, {.optimizer = sgd}).status().message(),
              HasSubstr("at least one weight"));
  EXPECT_THAT(BuildTrainStep(*Regression(), {9}, {.optimizer = sgd}).status().message(),
              HasSubstr("no parameter 9"));
}

TEST(TrainStepTest, MicroBatchedStepEqualsTheUnsplitStep) {
  // The loss is a mean over its rows, so the step on 2 micro-batches of 2 rows (or 4 of 1 row)
  // gives the same loss and update as the step on all 4 rows.
  const OptimizerConfig adam = {.kind = OptimizerKind::kAdam, .learning_rate = 0.1};
  std::vector<Literal> arguments = {Values({2}, {0.3, -0.2}),
                                    Values({}, {0.1}),
                                    Values({2}, {0.01, 0.02}),
                                    Values({2}, {0.001, 0.002}),
                                    Values({}, {0.03}),
                                    Values({}, {0.004}),
                                    Values({}, {3}),
                                    kX,
                                    kY};
  Literal whole = Step(**BuildTrainStep(*Regression(), {0, 1}, {.optimizer = adam}), arguments);
  for (int64_t micro_batches : {2, 4}) {
    SCOPED_TRACE(micro_batches);
    Result<std::unique_ptr<ir::Module>> step =
        BuildTrainStep(*Regression(4 / micro_batches), {0, 1},
                       {.optimizer = adam, .num_micro_batches = micro_batches});
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    Literal split = Step(**step, arguments);
    ASSERT_EQ(split.tuple_elements().size(), whole.tuple_elements().size());
    for (size_t i = 0; i < whole.tuple_elements().size(); ++i) {
      EXPECT_THAT(Doubles(split.tuple_element(static_cast<int64_t>(i))),
                  ::testing::Pointwise(::testing::DoubleNear(1e-12),
                                       Doubles(whole.tuple_element(static_cast<int64_t>(i)))))
          << "output " << i;
    }
  }
}

TEST(TrainStepTest, MicroBatchesNeedABatchDimension) {
  const OptimizerConfig sgd = {.kind = OptimizerKind::kSgd};
  // Training only w leaves the scalar b as batch data, which cannot be split.
  Result<std::unique_ptr<ir::Module>> step =
      BuildTrainStep(*Regression(), {0}, {.optimizer = sgd, .num_micro_batches = 2});
  ASSERT_FALSE(step.ok());
  EXPECT_THAT(step.status().message(), HasSubstr("batch parameter %b has shape f64[]"));
  EXPECT_THAT(BuildTrainStep(*Regression(), {0, 1}, {.optimizer = sgd, .num_micro_batches = 0})
                  .status()
                  .message(),
              HasSubstr("at least 1"));
}

}  // namespace
}  // namespace alpa::autodiff
