// Gradient checks of the elementwise and shape rules, and Grad's errors.
#include "autodiff/grad.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gradient_check.h"
#include "interp/evaluator.h"

namespace alpa::autodiff::testing {
namespace {

using ir::ComputationBuilder;
using ir::Instruction;
using ir::Opcode;
using Params = std::vector<Instruction*>;
using ::testing::HasSubstr;

void Check(const std::vector<ir::Shape>& shapes, const BodyFn& body, std::vector<int64_t> wrt,
           double tolerance = 1e-6) {
  std::unique_ptr<ir::Module> forward = WeightedSumLoss(shapes, body);
  ASSERT_NE(forward, nullptr);
  ExpectGradientMatchesFiniteDifferences(*forward, wrt, tolerance);
}

TEST(GradTest, Arithmetic) {
  // (a + b) * a - b / (a * a + 2): every binary rule, and a used four times.
  Check({F64({2, 3}), F64({2, 3})},
        [](ComputationBuilder& b, const Params& p) {
          Instruction* two = b.Broadcast(b.ConstantScalar(ir::DType::kF64, 2), {2, 3}, {});
          Instruction* denominator = b.Add(b.Multiply(p[0], p[0]), two);
          return b.Subtract(b.Multiply(b.Add(p[0], p[1]), p[0]), b.Divide(p[1], denominator));
        },
        {0, 1});
}

TEST(GradTest, UnaryFunctions) {
  // Inputs are moved to [1.5, 2.5) where log, sqrt and rsqrt are smooth.
  for (Opcode opcode : {Opcode::kNegate, Opcode::kExp, Opcode::kExpm1, Opcode::kLog, Opcode::kLog1p,
                        Opcode::kTanh, Opcode::kLogistic, Opcode::kSqrt, Opcode::kRsqrt,
                        Opcode::kSin, Opcode::kCos, Opcode::kAbs, Opcode::kErf}) {
    SCOPED_TRACE(ir::OpcodeName(opcode));
    Check({F64({5})},
          [opcode](ComputationBuilder& b, const Params& p) {
            Instruction* shift = b.Broadcast(b.ConstantScalar(ir::DType::kF64, 2), {5}, {});
            return b.Unary(opcode, b.Add(p[0], shift));
          },
          {0});
  }
}

TEST(GradTest, PowerOfAPositiveBase) {
  Check({F64({2, 3}), F64({2, 3})},
        [](ComputationBuilder& b, const Params& p) {
          Instruction* shift = b.Broadcast(b.ConstantScalar(ir::DType::kF64, 2), {2, 3}, {});
          return b.Power(b.Add(p[0], shift), p[1]);
        },
        {0, 1});
}

TEST(GradTest, MaximumMinimumAndSelect) {
  // relu(a) + min(a, b) + select(a > b, a * b, b): random inputs make ties unlikely.
  Check({F64({4}), F64({4})},
        [](ComputationBuilder& b, const Params& p) {
          Instruction* zero = b.Broadcast(b.ConstantScalar(ir::DType::kF64, 0), {4}, {});
          Instruction* relu = b.Maximum(p[0], zero);
          Instruction* pick = b.Select(b.Compare(p[0], p[1], ir::ComparisonDirection::kGt),
                                       b.Multiply(p[0], p[1]), p[1]);
          return b.Add(b.Add(relu, b.Minimum(p[0], p[1])), pick);
        },
        {0, 1});
}

TEST(GradTest, ConvertCarriesTheCotangentBackToTheOperandsType) {
  // loss = sum(w * f64(f32(x))): dloss/dx = w rounded to f32 and back (finite differences through
  // an f32 rounding would be noise, so the expectation is exact instead).
  std::unique_ptr<ir::Module> forward =
      WeightedSumLoss({F64({3})}, [](ComputationBuilder& b, const Params& p) {
        return b.Convert(b.Convert(p[0], ir::DType::kF32), ir::DType::kF64);
      });
  ASSERT_NE(forward, nullptr);
  Result<std::unique_ptr<ir::Module>> gradient = Grad(*forward, {0});
  ASSERT_TRUE(gradient.ok()) << gradient.status().ToString();
  Result<ir::Literal> result =
      interp::EvaluateModule(**gradient, {ir::Literal::FromDoubles(F64({3}), {0.25, -1, 3})});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ir::Literal& dx = result->tuple_element(1);
  EXPECT_EQ(dx.shape().dtype(), ir::DType::kF64);
  // Weights 0.5 + 0.37 k (gradient_check.cc), each rounded to f32.
  for (int64_t k = 0; k < 3; ++k) {
    EXPECT_EQ(dx.GetDouble(k), static_cast<double>(static_cast<float>(0.5 + 0.37 * k)));
  }
}

TEST(GradTest, BroadcastReshapeTranspose) {
  // A bias [3] broadcast along rows, a column [2] along columns, a [6] seen as [2,3] transposed.
  Check({F64({3}), F64({2}), F64({6})},
        [](ComputationBuilder& b, const Params& p) {
          Instruction* bias = b.Broadcast(p[0], {2, 3}, {1});
          Instruction* column = b.Broadcast(p[1], {2, 3}, {0});
          Instruction* matrix = b.Transpose(b.Reshape(p[2], {3, 2}), {1, 0});
          return b.Multiply(b.Add(bias, column), matrix);
        },
        {0, 1, 2});
}

TEST(GradTest, SliceConcatenate) {
  // A strided slice of x concatenated with y and with another slice of x.
  Check({F64({3, 7}), F64({3, 2})},
        [](ComputationBuilder& b, const Params& p) {
          Instruction* strided = b.Slice(p[0], {{0, 3, 1}, {1, 7, 2}});  // [3,3]
          Instruction* head = b.Slice(p[0], {{1, 3, 1}, {0, 5, 1}});     // [2,5]
          Instruction* both = b.Concatenate({strided, p[1]}, 1);         // [3,5]
          return b.Concatenate({both, head}, 0);                         // [5,5]
        },
        {0, 1});
}

TEST(GradTest, ReduceSumOverSeveralDimensions) {
  Check({F64({2, 3, 4})},
        [](ComputationBuilder& b, const Params& p) {
          Instruction* squared = b.Multiply(p[0], p[0]);
          return b.Reduce(squared, b.ConstantScalar(ir::DType::kF64, 0), {0, 2},
                          b.module_builder().ScalarReducer(Opcode::kAdd, ir::DType::kF64));
        },
        {0});
}

TEST(GradTest, UnusedParameterGetsZeros) {
  std::unique_ptr<ir::Module> forward = WeightedSumLoss(
      {F64({2}), F64({3})}, [](ComputationBuilder& b, const Params& p) { return p[0]; });
  Result<std::unique_ptr<ir::Module>> gradient = Grad(*forward, {1});
  ASSERT_TRUE(gradient.ok()) << gradient.status().ToString();
  ExpectGradientMatchesFiniteDifferences(*forward, {1});
}

TEST(GradTest, LossMustBeAScalarFloat) {
  ir::ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("f");
  Instruction* x = b.Parameter(0, F64({2}), "x");
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*b.Build(b.Negate(x)));
  ASSERT_TRUE(module.ok());
  Result<std::unique_ptr<ir::Module>> gradient = Grad(**module, {0});
  ASSERT_FALSE(gradient.ok());
  EXPECT_THAT(gradient.status().message(), HasSubstr("the loss %negate"));
  EXPECT_THAT(gradient.status().message(), HasSubstr("must be a scalar float, not f64[2]"));
}

TEST(GradTest, BadParameterListsAreErrors) {
  std::unique_ptr<ir::Module> forward =
      WeightedSumLoss({F64({2})}, [](ComputationBuilder& b, const Params& p) { return p[0]; });
  EXPECT_THAT(Grad(*forward, {1}).status().message(), HasSubstr("no parameter 1"));
  EXPECT_THAT(Grad(*forward, {0, 0}).status().message(), HasSubstr("listed twice"));
}

TEST(GradTest, OpWithoutARuleIsNamed) {
  // sort lies between x and the loss and has no rule yet.
  std::unique_ptr<ir::Module> forward =
      WeightedSumLoss({F64({4})}, [](ComputationBuilder& b, const Params& p) {
        ir::ModuleBuilder& mb = b.module_builder();
        ComputationBuilder less = mb.NewComputation("less");
        Instruction* l = less.Parameter(0, F64({}));
        Instruction* r = less.Parameter(1, F64({}));
        Result<ir::Computation*> comparator =
            less.Build(less.Compare(l, r, ir::ComparisonDirection::kLt));
        return b.Sort({p[0]}, 0, comparator.ok() ? *comparator : nullptr);
      });
  ASSERT_NE(forward, nullptr);
  Result<std::unique_ptr<ir::Module>> gradient = Grad(*forward, {0});
  ASSERT_FALSE(gradient.ok());
  EXPECT_THAT(gradient.status().message(), HasSubstr("(sort)"));
}

}  // namespace
}  // namespace alpa::autodiff::testing
