// Layer boundaries through autodiff and rematerialisation (GradOptions::remat) on a three-layer
// tanh network, small enough to count its instructions by hand.
#include <gtest/gtest.h>

#include <map>

#include "autodiff/grad.h"
#include "gradient_check.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "ir/layer_boundary.h"

namespace alpa::autodiff::testing {
namespace {

using ir::Instruction;

// loss(w0, w1, w2, x) = sum((tanh(tanh(x w0) w1) w2)^2) with a boundary after each tanh:
// layer 0 = tanh(x w0), layer 1 = tanh(h0 w1), layer 2 = the output and the loss.
std::unique_ptr<ir::Module> ThreeLayers() {
  ir::ModuleBuilder mb("three_layers");
  ir::ComputationBuilder b = mb.NewComputation("loss");
  Instruction* w0 = b.Parameter(0, F64({3, 4}), "w0");
  Instruction* w1 = b.Parameter(1, F64({4, 4}), "w1");
  Instruction* w2 = b.Parameter(2, F64({4, 2}), "w2");
  Instruction* x = b.Parameter(3, F64({5, 3}), "x");
  Instruction* h0 = ir::EmitLayerBoundary(b, b.Tanh(b.MatMul(x, w0)), {.layer = 0});
  Instruction* h1 = ir::EmitLayerBoundary(b, b.Tanh(b.MatMul(h0, w1)), {.layer = 1});
  Instruction* y = b.MatMul(h1, w2);
  Instruction* loss = b.Reduce(b.Multiply(y, y), b.ConstantScalar(ir::DType::kF64, 0), {0, 1},
                               mb.ScalarReducer(ir::Opcode::kAdd, ir::DType::kF64));
  Result<ir::Computation*> entry = b.Build(loss);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  return std::move(mb.Build(*entry)).value();
}

std::unique_ptr<ir::Module> GradOf(const ir::Module& loss, bool remat) {
  ir::ModuleBuilder mb("grad");
  ir::ComputationBuilder b = mb.NewComputation("grad");
  std::vector<Instruction*> arguments;
  for (const Instruction* parameter : loss.entry()->parameters()) {
    arguments.push_back(b.Parameter(parameter->attributes().parameter_number, parameter->shape(),
                                    parameter->name()));
  }
  Result<std::vector<Instruction*>> results =
      EmitLossAndGradients(*loss.entry(), arguments, {0, 1, 2}, b, {.remat = remat});
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  Result<ir::Computation*> entry = b.Build(b.Tuple(*results));
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  (*entry)->RemoveDeadInstructions();
  return std::move(mb.Build(*entry)).value();
}

std::map<ir::Opcode, int> OpcodeCounts(const ir::Module& module) {
  std::map<ir::Opcode, int> counts;
  for (const auto& instruction : module.entry()->instructions()) ++counts[instruction->opcode()];
  return counts;
}

TEST(RematTest, GradientsAreCorrectWithAndWithoutRemat) {
  std::unique_ptr<ir::Module> loss = ThreeLayers();
  ExpectGradientMatchesFiniteDifferences(*loss, {0, 1, 2});
  // The same check through the remat path: compare its gradients with the plain ones.
  const std::vector<ir::Literal> inputs = interp::RandomArguments(*loss->entry(), 7);
  Result<ir::Literal> plain = interp::EvaluateModule(*GradOf(*loss, false), inputs);
  Result<ir::Literal> remat = interp::EvaluateModule(*GradOf(*loss, true), inputs);
  ASSERT_TRUE(plain.ok() && remat.ok());
  for (int64_t i = 0; i < 4; ++i) {
    const ir::Literal& a = plain->tuple_element(i);
    const ir::Literal& b = remat->tuple_element(i);
    for (int64_t e = 0; e < a.element_count(); ++e) EXPECT_EQ(a.GetDouble(e), b.GetDouble(e));
  }
}

// Without remat: 3 forward dots, and the backward's 5 (w0's gradient needs only x^T g: x is
// data; w1 and w2 need two each), 2 tanh. With remat the backward of layers 0 and 1 recomputes
// their dot and tanh from the values entering them; layer 2, the loss, is not recomputed.
TEST(RematTest, RecomputesEachLayerButTheLast) {
  std::unique_ptr<ir::Module> loss = ThreeLayers();
  std::map<ir::Opcode, int> plain = OpcodeCounts(*GradOf(*loss, false));
  std::map<ir::Opcode, int> remat = OpcodeCounts(*GradOf(*loss, true));
  EXPECT_EQ(plain[ir::Opcode::kDot], 8);
  EXPECT_EQ(plain[ir::Opcode::kTanh], 2);
  EXPECT_EQ(remat[ir::Opcode::kDot], 10);
  EXPECT_EQ(remat[ir::Opcode::kTanh], 4);
}

TEST(RematTest, EachForwardBoundaryGetsABackwardTwin) {
  std::unique_ptr<ir::Module> grad = GradOf(*ThreeLayers(), false);
  std::map<std::pair<int64_t, bool>, const Instruction*> markers;
  for (const auto& instruction : grad->entry()->instructions()) {
    if (auto boundary = ir::AsLayerBoundary(*instruction)) {
      markers[{boundary->layer, boundary->backward}] = instruction.get();
    }
  }
  ASSERT_EQ(markers.size(), 4u);
  for (int64_t layer : {0, 1}) {
    const Instruction* forward = markers.at({layer, false});
    const Instruction* backward = markers.at({layer, true});
    // The backward marker carries the cotangent of the forward marker's value.
    EXPECT_EQ(backward->shape(), forward->shape());
  }
  // The cotangent of h1 flows into layer 1's backward pass, which produces h0's cotangent: the
  // backward marker of layer 0 depends on the backward marker of layer 1.
  std::vector<const Instruction*> stack = {markers.at({0, true})};
  bool reached = false;
  while (!stack.empty() && !reached) {
    const Instruction* at = stack.back();
    stack.pop_back();
    reached = at == markers.at({1, true});
    for (const Instruction* operand : at->operands()) stack.push_back(operand);
  }
  EXPECT_TRUE(reached);
}

}  // namespace
}  // namespace alpa::autodiff::testing
