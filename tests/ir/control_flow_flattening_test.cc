// FlattenControlFlow and its passes: counted loops' trip counts proven from their condition and
// body (loop_unrolling.h), a scan over stacked weights unrolled into slices with the same values
// (and the forward's stacked buffer forwarded to the reversed loop that reads it back, so it
// dies: index_folding.h), nested loops, and the loops that must stay.
#include "ir/control_flow_flattening.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "ir/loop_unrolling.h"
#include "ir/verifier.h"

namespace alpa::ir {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  Result<std::unique_ptr<Module>> module = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

int64_t CountOpcode(const Computation& computation, Opcode opcode) {
  int64_t count = 0;
  for (const auto& instruction : computation.instructions()) {
    count += instruction->opcode() == opcode ? 1 : 0;
  }
  return count;
}

// A loop counting element 0 from `first` by `step` while `compare` holds.
std::string CountedLoop(int64_t first, int64_t step, const std::string& compare) {
  return fmt::format(R"(
HloModule counted

body {{
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  step = s32[] constant({1})
  next = s32[] add(i, step)
  one = f32[] constant(1)
  y = f32[] add(x, one)
  ROOT t = (s32[], f32[]) tuple(next, y)
}}

cond {{
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  {2}
}}

ENTRY main {{
  first = s32[] constant({0})
  zero = f32[] constant(0)
  init = (s32[], f32[]) tuple(first, zero)
  ROOT loop = (s32[], f32[]) while(init), condition=cond, body=body
}}
)",
                     first, step, compare);
}

std::optional<int64_t> TripCount(int64_t first, int64_t step, const std::string& compare) {
  std::unique_ptr<Module> module = Parse(CountedLoop(first, step, compare));
  if (module == nullptr) return std::nullopt;
  return CountedLoopTripCount(*module->entry()->root());
}

std::string Compare(const std::string& direction, int64_t bound, bool counter_first = true) {
  const std::string operands = counter_first ? "i, n" : "n, i";
  return fmt::format("n = s32[] constant({})\n  ROOT c = pred[] compare({}), direction={}", bound,
                     operands, direction);
}

TEST(LoopTripCountTest, EveryDirectionOfACountedLoop) {
  EXPECT_EQ(TripCount(0, 1, Compare("LT", 8)), 8);
  EXPECT_EQ(TripCount(0, 1, Compare("LE", 8)), 9);
  EXPECT_EQ(TripCount(0, 3, Compare("LT", 8)), 3);  // 0, 3, 6
  EXPECT_EQ(TripCount(8, -1, Compare("GT", 0)), 8);
  EXPECT_EQ(TripCount(8, -2, Compare("GE", 0)), 5);  // 8, 6, 4, 2, 0
  EXPECT_EQ(TripCount(0, 3, Compare("NE", 9)), 3);
  EXPECT_EQ(TripCount(5, 1, Compare("LT", 3)), 0);
  EXPECT_EQ(TripCount(-4, 1, Compare("LT", -1)), 3);
  // The bound first: `8 > i` is `i < 8`.
  EXPECT_EQ(TripCount(0, 1, Compare("GT", 8, /*counter_first=*/false)), 8);
}

TEST(LoopTripCountTest, LoopsWithoutAProvenCountHaveNone) {
  EXPECT_EQ(TripCount(0, -1, Compare("LT", 8)), std::nullopt);  // never ends
  EXPECT_EQ(TripCount(0, 3, Compare("NE", 10)), std::nullopt);  // steps over its bound
  EXPECT_EQ(TripCount(0, 1, Compare("EQ", 0)), std::nullopt);
  // A condition that reads more than the counter.
  EXPECT_EQ(TripCount(0, 1,
                      "n = s32[] constant(8)\n  lt = pred[] compare(i, n), direction=LT\n"
                      "  ten = f32[] constant(10)\n  small = pred[] compare(x, ten), direction=LT\n"
                      "  ROOT both = pred[] and(lt, small)"),
            std::nullopt);
}

// A scan over three stacked weights that stores each layer's output (as JAX saves residuals),
// then a reversed loop that reads them back, last first, into a running sum that halves.
constexpr char kScanAndReversedRead[] = R"(
HloModule scan

forward {
  p = (s32[], f32[2,4], f32[3,4,4], f32[3,2,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2,4] get-tuple-element(p), index=1
  w = f32[3,4,4] get-tuple-element(p), index=2
  ys = f32[3,2,4] get-tuple-element(p), index=3
  zero = s32[] constant(0)
  wi = f32[1,4,4] dynamic-slice(w, i, zero, zero), dynamic_slice_sizes={1,4,4}
  wr = f32[4,4] reshape(wi)
  d = f32[2,4] dot(x, wr), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[2,4] tanh(d)
  yr = f32[1,2,4] reshape(y)
  stored = f32[3,2,4] dynamic-update-slice(ys, yr, i, zero, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[2,4], f32[3,4,4], f32[3,2,4]) tuple(next, y, w, stored)
}

forward_cond {
  p = (s32[], f32[2,4], f32[3,4,4], f32[3,2,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

backward {
  p = (s32[], f32[2,4], f32[3,2,4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  acc = f32[2,4] get-tuple-element(p), index=1
  ys = f32[3,2,4] get-tuple-element(p), index=2
  two = s32[] constant(2)
  k = s32[] subtract(two, j)
  zero = s32[] constant(0)
  negative = pred[] compare(k, zero), direction=LT
  three = s32[] constant(3)
  wrapped = s32[] add(k, three)
  index = s32[] select(negative, wrapped, k)
  yk = f32[1,2,4] dynamic-slice(ys, index, zero, zero), dynamic_slice_sizes={1,2,4}
  yr = f32[2,4] reshape(yk)
  half = f32[] constant(0.5)
  halves = f32[2,4] broadcast(half), dimensions={}
  scaled = f32[2,4] multiply(acc, halves)
  sum = f32[2,4] add(scaled, yr)
  one = s32[] constant(1)
  next = s32[] add(j, one)
  ROOT t = (s32[], f32[2,4], f32[3,2,4]) tuple(next, sum, ys)
}

backward_cond {
  p = (s32[], f32[2,4], f32[3,2,4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(j, n), direction=LT
}

ENTRY main {
  x = f32[2,4] parameter(0)
  w = f32[3,4,4] parameter(1)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  ys0 = f32[3,2,4] broadcast(z), dimensions={}
  init = (s32[], f32[2,4], f32[3,4,4], f32[3,2,4]) tuple(zero, x, w, ys0)
  loop = (s32[], f32[2,4], f32[3,4,4], f32[3,2,4]) while(init), condition=forward_cond, body=forward
  out = f32[2,4] get-tuple-element(loop), index=1
  ys = f32[3,2,4] get-tuple-element(loop), index=3
  acc0 = f32[2,4] broadcast(z), dimensions={}
  binit = (s32[], f32[2,4], f32[3,2,4]) tuple(zero, acc0, ys)
  back = (s32[], f32[2,4], f32[3,2,4]) while(binit), condition=backward_cond, body=backward
  total = f32[2,4] get-tuple-element(back), index=1
  ROOT r = (f32[2,4], f32[2,4]) tuple(out, total)
}
)";

std::vector<Literal> ScanArguments() {
  std::vector<double> x;
  std::vector<double> w;
  for (int i = 0; i < 8; ++i) x.push_back(0.25 * (i - 3));
  for (int i = 0; i < 48; ++i) w.push_back(0.1 * ((i * 7) % 11 - 5));
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromDoubles(Shape::Array(DType::kF32, {2, 4}), x));
  arguments.push_back(Literal::FromDoubles(Shape::Array(DType::kF32, {3, 4, 4}), w));
  return arguments;
}

TEST(ControlFlowFlatteningTest, AScanBecomesSlicesWithTheSameValues) {
  std::unique_ptr<Module> module = Parse(kScanAndReversedRead);
  ASSERT_NE(module, nullptr);
  Result<Literal> before = interp::EvaluateModule(*module, ScanArguments());
  ASSERT_TRUE(before.ok()) << before.status().message();

  const ControlFlowFlattening flattened = FlattenControlFlow(*module->entry());
  EXPECT_EQ(flattened.loops_unrolled, 2);
  EXPECT_EQ(flattened.iterations, 6);
  EXPECT_TRUE(flattened.loops_kept.empty());
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module).message();
  const Computation& entry = *module->entry();
  for (Opcode gone : {Opcode::kWhile, Opcode::kCall, Opcode::kDynamicSlice,
                      Opcode::kDynamicUpdateSlice, Opcode::kGetTupleElement}) {
    EXPECT_EQ(CountOpcode(entry, gone), 0) << OpcodeName(gone);
  }
  // Each layer reads its weights with a slice; the stored outputs reach the reversed loop
  // directly, so the stacked buffer is gone.
  EXPECT_EQ(CountOpcode(entry, Opcode::kSlice), 3);
  EXPECT_EQ(CountOpcode(entry, Opcode::kDot), 3);
  const Instruction* last_dot = entry.GetInstruction("loop.iter2.d");
  ASSERT_NE(last_dot, nullptr);
  EXPECT_EQ(last_dot->operand(1)->operand(0)->attributes().slice[0].start, 2);

  Result<Literal> after = interp::EvaluateModule(*module, ScanArguments());
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(*after, *before);
}

// An outer loop of 2 iterations around an inner one of 3, each adding its counter product.
constexpr char kNestedLoops[] = R"(
HloModule nested

inner {
  p = (s32[], s32[], f32[]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  i = s32[] get-tuple-element(p), index=1
  x = f32[] get-tuple-element(p), index=2
  ij = s32[] multiply(i, j)
  f = f32[] convert(ij)
  y = f32[] add(x, f)
  one = s32[] constant(1)
  next = s32[] add(j, one)
  ROOT t = (s32[], s32[], f32[]) tuple(next, i, y)
}

inner_cond {
  p = (s32[], s32[], f32[]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(j, n), direction=LT
}

outer {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  init = (s32[], s32[], f32[]) tuple(zero, i, x)
  loop = (s32[], s32[], f32[]) while(init), condition=inner_cond, body=inner
  y = f32[] get-tuple-element(loop), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[]) tuple(next, y)
}

outer_cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f32[] parameter(0)
  one = s32[] constant(1)
  init = (s32[], f32[]) tuple(one, x)
  loop = (s32[], f32[]) while(init), condition=outer_cond, body=outer
  ROOT y = f32[] get-tuple-element(loop), index=1
}
)";

TEST(ControlFlowFlatteningTest, NestedLoopsUnrollOnceTheOuterOneIs) {
  std::unique_ptr<Module> module = Parse(kNestedLoops);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  arguments.push_back(Literal::Scalar(DType::kF32, 0.5));
  const ControlFlowFlattening flattened = FlattenControlFlow(*module->entry());
  EXPECT_EQ(flattened.loops_unrolled, 3);  // the outer, then its two copies of the inner
  EXPECT_EQ(flattened.iterations, 2 + 2 * 3);
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module).message();
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kWhile), 0);
  Result<Literal> after = interp::EvaluateModule(*module, std::move(arguments));
  ASSERT_TRUE(after.ok()) << after.status().message();
  // 0.5 + sum over i in {1, 2}, j in {0, 1, 2} of i * j = 0.5 + 3 * 3.
  EXPECT_EQ(after->GetDouble(0), 9.5);
}

TEST(ControlFlowFlatteningTest, LoopsWithoutAProvenCountOrTooLargeStay) {
  const std::string data_dependent = CountedLoop(
      0, 1, "ten = f32[] constant(10)\n  ROOT small = pred[] compare(x, ten), direction=LT");
  std::unique_ptr<Module> module = Parse(data_dependent);
  ASSERT_NE(module, nullptr);
  ControlFlowFlattening flattened = FlattenControlFlow(*module->entry());
  EXPECT_EQ(flattened.loops_unrolled, 0);
  ASSERT_EQ(flattened.loops_kept.size(), 1u);
  EXPECT_EQ(flattened.loops_kept[0].name, "loop");
  EXPECT_NE(flattened.loops_kept[0].reason.find("its trip count is not proven"), std::string::npos)
      << flattened.loops_kept[0].reason;
  Result<Literal> value = interp::EvaluateModule(*module, {});
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value->tuple_element(1).GetDouble(0), 10);

  module = Parse(CountedLoop(0, 1, Compare("LT", 1000)));
  ASSERT_NE(module, nullptr);
  flattened = FlattenControlFlow(*module->entry(), /*max_instructions=*/100);
  EXPECT_EQ(flattened.loops_unrolled, 0);
  ASSERT_EQ(flattened.loops_kept.size(), 1u);
  EXPECT_EQ(flattened.loops_kept[0].reason,
            "1000 iterations of 8 instructions would pass the limit of 100");
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kWhile), 1);
}

}  // namespace
}  // namespace alpa::ir
