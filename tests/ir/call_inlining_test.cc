// InlineCalls: a call (and a call inside the callee) becomes a copy of its computation, bound to
// the call's operands, with the same value.
#include "ir/call_inlining.h"

#include <gtest/gtest.h>

#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "ir/verifier.h"

namespace alpa::ir {
namespace {

constexpr char kNestedCalls[] = R"(
HloModule nested

relu {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  zeros = f32[4] broadcast(zero), dimensions={}
  ROOT max = f32[4] maximum(x, zeros)
}

scaled_relu {
  a = f32[4] parameter(0)
  s = f32[4] parameter(1)
  product = f32[4] multiply(a, s)
  ROOT r = f32[4] call(product), to_apply=relu
}

ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  first = f32[4] call(p, q), to_apply=scaled_relu
  second = f32[4] call(first, p), to_apply=scaled_relu
  ROOT sum = f32[4] add(first, second)
}
)";

TEST(CallInliningTest, NestedCallsBecomeCopiesWithTheSameValue) {
  Result<std::unique_ptr<Module>> module = hlo::ParseHloModule(kNestedCalls, "nested.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto arguments = [] {
    std::vector<Literal> values;
    values.push_back(Literal::FromDoubles(Shape::Array(DType::kF32, {4}), {-1, 2, 3, -4}));
    values.push_back(Literal::FromDoubles(Shape::Array(DType::kF32, {4}), {2, 2, -1, 1}));
    return values;
  };
  Result<Literal> before = interp::EvaluateModule(**module, arguments());
  ASSERT_TRUE(before.ok()) << before.status().message();

  EXPECT_EQ(InlineCalls(*(*module)->entry()), 4);  // two calls, each with one inside
  ASSERT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module).message();
  for (const auto& instruction : (*module)->entry()->instructions()) {
    EXPECT_NE(instruction->opcode(), Opcode::kCall) << instruction->name();
  }
  EXPECT_NE((*module)->entry()->GetInstruction("second.r.max"), nullptr);
  Result<Literal> after = interp::EvaluateModule(**module, arguments());
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(*after, *before);
}

}  // namespace
}  // namespace alpa::ir
