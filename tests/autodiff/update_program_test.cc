// The user's optimizer as a program (update_program.h): split by weight, refused where it
// couples weights, and in a train step the same update as ours where it computes the same thing.
#include "autodiff/update_program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/train_step.h"
#include "interp/evaluator.h"

namespace alpa::autodiff {
namespace {

using ir::DType;
using ir::Instruction;
using ir::Literal;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ir::Shape F64(std::vector<int64_t> dims) { return ir::Shape::Array(DType::kF64, dims); }

Instruction* Scaled(ir::ComputationBuilder& b, double factor, Instruction* x) {
  return b.Multiply(b.Broadcast(b.ConstantScalar(DType::kF64, factor), x->shape().dims(), {}), x);
}

// How a program's value may go wrong.
enum class Coupling { kNone, kGlobalNorm, kSharedReadsAState };

// SGD with momentum 0.9 and learning rate 0.1 on weights w0 f64[2] and w1 f64[], written as a
// framework writes it: apply(w0, w1, g0, g1, count, v0, v1) -> (w0', w1', count', v0', v1') with
// v' = 0.9 v + g, w' = w - 0.1 v', count' = count + 1.
std::shared_ptr<const ir::Module> MomentumProgram(Coupling coupling = Coupling::kNone) {
  ir::ModuleBuilder mb("apply");
  ir::ComputationBuilder b = mb.NewComputation("apply");
  Instruction* w0 = b.Parameter(0, F64({2}), "w0");
  Instruction* w1 = b.Parameter(1, F64({}), "w1");
  Instruction* g0 = b.Parameter(2, F64({2}), "g0");
  Instruction* g1 = b.Parameter(3, F64({}), "g1");
  Instruction* count = b.Parameter(4, F64({}), "count");
  Instruction* v0 = b.Parameter(5, F64({2}), "v0");
  Instruction* v1 = b.Parameter(6, F64({}), "v1");
  if (coupling == Coupling::kGlobalNorm) {  // g0 scaled by |g1|^2, as a global norm would
    g0 = b.Multiply(g0, b.Broadcast(b.Multiply(g1, g1), {2}, {}));
  }
  Instruction* next_v0 = b.Add(Scaled(b, 0.9, v0), g0);
  Instruction* next_v1 = b.Add(Scaled(b, 0.9, v1), g1);
  Instruction* next_count = b.Add(count, b.ConstantScalar(DType::kF64, 1));
  if (coupling == Coupling::kSharedReadsAState) next_count = b.Add(next_count, v1);
  Result<ir::Computation*> entry =
      b.Build(b.Tuple({b.Subtract(w0, Scaled(b, 0.1, next_v0)),
                       b.Subtract(w1, Scaled(b, 0.1, next_v1)), next_count, next_v0, next_v1}));
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*entry);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return std::move(module).value();
}

// loss(w0 f64[2], w1 f64[], x f64[2]) = sum((w0 x + w1)^2).
std::unique_ptr<ir::Module> Loss() {
  ir::ModuleBuilder mb("loss");
  ir::ComputationBuilder b = mb.NewComputation("loss");
  Instruction* w0 = b.Parameter(0, F64({2}), "w0");
  Instruction* w1 = b.Parameter(1, F64({}), "w1");
  Instruction* x = b.Parameter(2, F64({2}), "x");
  Instruction* y = b.Add(b.Multiply(w0, x), b.Broadcast(w1, {2}, {}));
  Result<ir::Computation*> entry =
      b.Build(b.Reduce(b.Multiply(y, y), b.ConstantScalar(DType::kF64, 0), {0},
                       mb.ScalarReducer(ir::Opcode::kAdd, DType::kF64)));
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  return std::move(mb.Build(*entry)).value();
}

TEST(UpdateProgramTest, StatesBelongToTheWeightTheirNextValueReads) {
  Result<UpdateProgram> program = SplitUpdateProgram(MomentumProgram(), 2);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_THAT(program->weight_states, ElementsAre(ElementsAre(1), ElementsAre(2)));
  EXPECT_THAT(program->shared_states, ElementsAre(0));  // the count reads no weight
}

TEST(UpdateProgramTest, ValuesThatReadTwoWeightsAreRefused) {
  Result<UpdateProgram> global_norm = SplitUpdateProgram(MomentumProgram(Coupling::kGlobalNorm), 2);
  ASSERT_FALSE(global_norm.ok());
  EXPECT_THAT(global_norm.status().message(),
              HasSubstr("next value of state 1 reads weights 0 and 1"));
  Result<UpdateProgram> shared =
      SplitUpdateProgram(MomentumProgram(Coupling::kSharedReadsAState), 2);
  ASSERT_FALSE(shared.ok());
  EXPECT_THAT(shared.status().message(), HasSubstr("state 0 is shared"));
  EXPECT_THAT(shared.status().message(), HasSubstr("weight 1's state"));
}

TEST(UpdateProgramTest, ProgramsOfAnotherFormAreRefused) {
  Result<UpdateProgram> three = SplitUpdateProgram(MomentumProgram(), 3);
  ASSERT_FALSE(three.ok());
  EXPECT_THAT(three.status().message(), HasSubstr("returns 5 values"));
}

TEST(UpdateProgramTest, TheStepWithTheProgramIsTheStepWithOurMomentum) {
  // Both steps carry (w0, w1, v0, v1, t or count) and read x: the same layout and results.
  Result<UpdateProgram> program = SplitUpdateProgram(MomentumProgram(), 2);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::unique_ptr<ir::Module> loss = Loss();
  const TrainStepOptions ours{
      .optimizer = {.kind = OptimizerKind::kSgd, .learning_rate = 0.1, .momentum = 0.9}};
  TrainStepOptions theirs;
  theirs.update = std::make_shared<const UpdateProgram>(*program);
  EXPECT_EQ(StepParameterLayout(*loss, {0, 1}, ours), StepParameterLayout(*loss, {0, 1}, theirs));
  Result<std::unique_ptr<ir::Module>> our_step = BuildTrainStep(*loss, {0, 1}, ours);
  Result<std::unique_ptr<ir::Module>> their_step = BuildTrainStep(*loss, {0, 1}, theirs);
  ASSERT_TRUE(our_step.ok()) << our_step.status().ToString();
  ASSERT_TRUE(their_step.ok()) << their_step.status().ToString();
  auto arguments = [] {
    std::vector<Literal> values;
    values.push_back(Literal::FromDoubles(F64({2}), {0.5, -1}));
    values.push_back(Literal::FromDoubles(F64({}), {0.25}));
    values.push_back(Literal::FromDoubles(F64({2}), {0.1, 0.2}));
    values.push_back(Literal::FromDoubles(F64({}), {-0.3}));
    values.push_back(Literal::FromDoubles(F64({}), {4}));
    values.push_back(Literal::FromDoubles(F64({2}), {3, 2}));
    return values;
  };
  Result<Literal> expected = interp::EvaluateModule(**our_step, arguments());
  Result<Literal> actual = interp::EvaluateModule(**their_step, arguments());
  ASSERT_TRUE(expected.ok() && actual.ok());
  ASSERT_EQ(actual->tuple_elements().size(), 6u);  // loss, w0', w1', v0', v1', count'
  for (size_t k = 0; k < 6; ++k) {
    for (int64_t e = 0; e < expected->tuple_element(k).element_count(); ++e) {
      EXPECT_DOUBLE_EQ(actual->tuple_element(k).GetDouble(e),
                       expected->tuple_element(k).GetDouble(e))
          << "result " << k << " element " << e;
    }
  }
}

TEST(UpdateProgramTest, AWeightOfAnotherShapeThanTheProgramsIsAnError) {
  Result<UpdateProgram> program = SplitUpdateProgram(MomentumProgram(), 2);
  ASSERT_TRUE(program.ok());
  TrainStepOptions options;
  options.update = std::make_shared<const UpdateProgram>(*program);
  options.update_weights = {1, 0};  // w0 f64[2] is not the program's scalar weight 1
  Result<std::unique_ptr<ir::Module>> step = BuildTrainStep(*Loss(), {0, 1}, options);
  ASSERT_FALSE(step.ok());
  EXPECT_THAT(step.status().message(), HasSubstr("is not the update program's weight 1"));
}

}  // namespace
}  // namespace alpa::autodiff
