// The instruction-list executor (instruction_list.h, device_executor.h): values equal to the
// reference interpreter's, buffers freed after their last reader with the peak the memory model
// computes for the same schedule, tuples built by moving, elementwise chains run as loops, the
// memory limit, and the timeline.
#include "runtime/device_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "cost/memory_usage.h"
#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "runtime/execution_trace.h"
#include "runtime/instruction_list.h"

namespace alpa::runtime {
namespace {

using ::testing::HasSubstr;

// f32[256] is 1 KiB. Live after each step (the argument counts throughout):
//   a = exp(p)           2 KiB  <- first reaches nothing higher than b's 3 KiB
//   b = add(a, a)        3 KiB, then a is freed: 2 KiB
//   c = multiply(b, p)   3 KiB
//   t = tuple(c, b)      moves c and b: still 3 KiB
constexpr std::string_view kChain = R"(HloModule chain
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] add(a, a)
  c = f32[256] multiply(b, p)
  ROOT t = (f32[256], f32[256]) tuple(c, b)
})";

// The same value twice in a tuple cannot be moved twice: it is copied and counted.
constexpr std::string_view kDuplicate = R"(HloModule duplicate
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] negate(p)
  t = (f32[256], f32[256]) tuple(a, a)
  x = f32[256] get-tuple-element(t), index=1
  ROOT y = f32[256] add(x, p)
})";

std::unique_ptr<ir::Module> Parse(std::string_view text) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(text, "test");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(module).value() : nullptr;
}

ir::Literal Ramp() {
  std::vector<double> values(256);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.01 * static_cast<double>(i);
  return ir::Literal::FromDoubles(ir::Shape::Array(ir::DType::kF32, {256}), values);
}

// An Adam-like update, p - lr * g / (sqrt(g * g) + eps): every value but the root has one reader
// and all are elementwise arithmetic, so the fast kernels run them as one loop reading p, g and
// the two scalars.
constexpr std::string_view kUpdate = R"(HloModule update
ENTRY main {
  p = f32[256] parameter(0)
  g = f32[256] parameter(1)
  lr = f32[] constant(0.5)
  lr_b = f32[256] broadcast(lr), dimensions={}
  sq = f32[256] multiply(g, g)
  root_v = f32[256] sqrt(sq)
  eps = f32[] constant(0.001)
  eps_b = f32[256] broadcast(eps), dimensions={}
  den = f32[256] add(root_v, eps_b)
  dir = f32[256] divide(g, den)
  step = f32[256] multiply(lr_b, dir)
  ROOT next = f32[256] subtract(p, step)
})";

// The slots and their release, as the reference kernels run them (one step per instruction).
TEST(InstructionListTest, FreesEachValueAfterItsLastReaderAndNeverTheArgumentsOrTheRoot) {
  std::unique_ptr<ir::Module> module = Parse(kChain);
  Result<InstructionList> list = CompileInstructionList(*module, KernelChoice::kReference);
  ASSERT_TRUE(list.ok()) << list.status().message();
  // Slots in post order: p 0, a 1, b 2, c 3, t 4.
  ASSERT_EQ(list->steps.size(), 4u);
  EXPECT_EQ(list->parameter_slots, std::vector<int32_t>{0});
  EXPECT_EQ(list->root_slot, 4);
  EXPECT_EQ(list->steps[1].release, std::vector<int32_t>{1});  // b frees a
  EXPECT_TRUE(list->steps[0].release.empty());
  EXPECT_TRUE(list->steps[2].release.empty());
  EXPECT_THAT(list->steps[3].release, ::testing::UnorderedElementsAre(2, 3));
  EXPECT_TRUE(list->steps[3].moves_operands);
  EXPECT_FALSE(list->steps[2].moves_operands);
}

TEST(InstructionListTest, AValueReadTwiceByATupleIsCopiedNotMoved) {
  std::unique_ptr<ir::Module> module = Parse(kDuplicate);
  Result<InstructionList> list = CompileInstructionList(*module);
  ASSERT_TRUE(list.ok());
  EXPECT_FALSE(list->steps[1].moves_operands);  // tuple(a, a)
  EXPECT_TRUE(list->steps[2].moves_operands);   // the tuple's last reader
}

// With the reference kernels the values are the interpreter's bit for bit (the fast kernels'
// own agreement is fast_kernels_test's).
TEST(DeviceExecutorTest, ValuesEqualTheInterpreterAndThePeakEqualsTheMemoryModel) {
  for (std::string_view text : {kChain, kDuplicate}) {
    std::unique_ptr<ir::Module> module = Parse(text);
    Result<InstructionList> list = CompileInstructionList(*module, KernelChoice::kReference);
    ASSERT_TRUE(list.ok());
    ExecutionProfile profile;
    Result<ir::Literal> got =
        ExecuteInstructionList(*list, {Ramp()}, interp::DeviceContext{}, {}, &profile);
    ASSERT_TRUE(got.ok()) << got.status().message();
    Result<ir::Literal> want = interp::EvaluateModule(*module, {Ramp()});
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(*got, *want) << module->name();
    EXPECT_EQ(profile.argument_bytes, 1024);
    if (text == kChain) {
      EXPECT_EQ(profile.peak_bytes, 3 * 1024);
      EXPECT_EQ(profile.peak_instruction->name(), "b");
      // The memory model's naive schedule is this one, with the same rules.
      EXPECT_EQ(profile.peak_bytes, cost::NaivePeakMemory(*module->entry()).peak_bytes);
    } else {
      // p, a and the tuple's copies of a: 4 KiB at the tuple, where the model (which aliases
      // tuples) counts 2 KiB.
      EXPECT_EQ(profile.peak_bytes, 4 * 1024);
      EXPECT_EQ(profile.peak_instruction->name(), "t");
    }
  }
}

// kChain with the fast kernels: exp(p) fuses into b = add(a, a), which runs as one loop reading
// p; a gets no step and no buffer.
TEST(InstructionListTest, AChainOfElementwiseOpsRunsAsOneLoopOverItsInputs) {
  std::unique_ptr<ir::Module> module = Parse(kChain);
  Result<InstructionList> list = CompileInstructionList(*module);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->steps.size(), 3u);  // b, c, t
  const InstructionStep& b = list->steps[0];
  EXPECT_EQ(b.instruction->name(), "b");
  ASSERT_NE(b.loop, nullptr);
  EXPECT_EQ(b.operands, std::vector<int32_t>{0});  // p's slot
  EXPECT_EQ(b.loop->loop.fused_values(), 1);
  EXPECT_EQ(list->steps[1].loop, nullptr);  // c: b has two readers, so c reads it from memory
}

TEST(DeviceExecutorTest, ALoopGivesTheReferenceBytesAndHoldsOnlyItsInputsAndOutput) {
  std::unique_ptr<ir::Module> module = Parse(kUpdate);
  Result<InstructionList> fast = CompileInstructionList(*module);
  Result<InstructionList> reference = CompileInstructionList(*module, KernelChoice::kReference);
  ASSERT_TRUE(fast.ok() && reference.ok());
  const InstructionStep& loop = fast->steps.back();
  ASSERT_NE(loop.loop, nullptr);
  EXPECT_EQ(loop.loop->loop.fused_values(), 5);  // sq, root_v, den, dir, step
  ASSERT_EQ(loop.loop->inputs.size(), 4u);
  EXPECT_EQ(loop.loop->inputs[0]->name(), "g");
  EXPECT_EQ(loop.loop->inputs[1]->name(), "eps");  // the broadcasts' scalars, read repeated
  EXPECT_EQ(loop.loop->inputs[2]->name(), "lr");
  EXPECT_EQ(loop.loop->inputs[3]->name(), "p");
  const std::vector<int64_t> array = {1}, repeated = {0};
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(loop.loop->loop.inputs[k].strides, k == 1 || k == 2 ? repeated : array) << k;
  }

  const std::vector<ir::Literal> arguments = {Ramp(), Ramp()};
  ExecutionProfile fused, unfused;
  Result<ir::Literal> got =
      ExecuteInstructionList(*fast, arguments, interp::DeviceContext{}, {}, &fused);
  Result<ir::Literal> want =
      ExecuteInstructionList(*reference, arguments, interp::DeviceContext{}, {}, &unfused);
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_EQ(*got, *want);  // multiply, sqrt, add, divide, subtract: exact in both
  // p, g, the two constants and the output; the reference run holds its temporaries besides.
  EXPECT_EQ(fused.peak_bytes, 3 * 1024 + 8);
  EXPECT_GT(unfused.peak_bytes, 3 * 1024 + 8);
  EXPECT_EQ(fused.peak_bytes, cost::NaivePeakMemory(*module->entry()).peak_bytes);
}

// A masked, scaled and shifted score, as an attention's softmax computes one: a multiply by a
// scalar, a select by a mask broadcast along the rows, a convert to f32 and a subtract of a row
// statistic broadcast along the columns run as one loop reading xb, the scalars, the mask and m
// in place; the mask (a compare reading a broadcast) is a loop of its own. The convert of x to
// bf16 stays out: inside the loop it would keep x's f32 array alive until d, twice the bytes of
// the bf16 array it frees. Every op is exact, so the bytes are the interpreter's.
constexpr std::string_view kMaskedScores = R"(HloModule masked
ENTRY main {
  x = f32[8,32] parameter(0)
  m = f32[8] parameter(1)
  c = f32[32] parameter(2)
  zero = f32[] constant(0)
  zero_b = f32[32] broadcast(zero), dimensions={}
  mask = pred[32] compare(c, zero_b), direction=GT
  mask_b = pred[8,32] broadcast(mask), dimensions={1}
  xb = bf16[8,32] convert(x)
  half = bf16[] constant(0.5)
  half_b = bf16[8,32] broadcast(half), dimensions={}
  s = bf16[8,32] multiply(xb, half_b)
  low = bf16[] constant(-100)
  low_b = bf16[8,32] broadcast(low), dimensions={}
  masked = bf16[8,32] select(mask_b, s, low_b)
  w = f32[8,32] convert(masked)
  m_b = f32[8,32] broadcast(m), dimensions={0}
  ROOT d = f32[8,32] subtract(w, m_b)
})";

TEST(DeviceExecutorTest, ALoopReadsMasksAndRowStatisticsInPlaceAndGivesTheReferenceBytes) {
  std::unique_ptr<ir::Module> module = Parse(kMaskedScores);
  Result<InstructionList> fast = CompileInstructionList(*module);
  Result<InstructionList> reference = CompileInstructionList(*module, KernelChoice::kReference);
  ASSERT_TRUE(fast.ok() && reference.ok());
  ASSERT_EQ(fast->steps.size(), 6u);  // zero, mask, xb, half, low, d
  const InstructionStep& mask = fast->steps[1];
  const InstructionStep& scores = fast->steps[5];
  ASSERT_NE(mask.loop, nullptr);
  ASSERT_NE(scores.loop, nullptr);
  EXPECT_EQ(mask.loop->loop.fused_values(), 0);
  EXPECT_EQ(scores.loop->loop.fused_values(), 3);  // s, masked, w
  std::vector<std::string> inputs;
  for (const ir::Instruction* input : scores.loop->inputs) inputs.push_back(input->name());
  EXPECT_EQ(inputs, (std::vector<std::string>{"xb", "half", "mask", "low", "m"}));
  EXPECT_EQ(scores.loop->loop.inputs[2].strides, (std::vector<int64_t>{0, 1}));  // the mask
  EXPECT_EQ(scores.loop->loop.inputs[4].strides, (std::vector<int64_t>{1, 0}));  // m

  auto values = [](std::vector<int64_t> dims, double scale) {
    std::vector<double> v(
        static_cast<size_t>(ir::Shape::Array(ir::DType::kF32, dims).ElementCount()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (static_cast<double>(i % 13) - 6.0);
    return ir::Literal::FromDoubles(ir::Shape::Array(ir::DType::kF32, std::move(dims)), v);
  };
  const std::vector<ir::Literal> arguments = {values({8, 32}, 0.37), values({8}, 0.5),
                                              values({32}, 1.0)};
  ExecutionProfile fused;
  Result<ir::Literal> got =
      ExecuteInstructionList(*fast, arguments, interp::DeviceContext{}, {}, &fused);
  Result<ir::Literal> want = ExecuteInstructionList(*reference, arguments, interp::DeviceContext{});
  ASSERT_TRUE(got.ok() && want.ok()) << (got.ok() ? want : got).status().message();
  EXPECT_EQ(*got, *want);
  EXPECT_EQ(fused.peak_bytes, cost::NaivePeakMemory(*module->entry()).peak_bytes);
}

// The reference kernels: one step per instruction, whose result the message names.
TEST(DeviceExecutorTest, AResultPastTheMemoryLimitFailsNamingTheBufferAndTheBytes) {
  std::unique_ptr<ir::Module> module = Parse(kChain);
  Result<InstructionList> list = CompileInstructionList(*module, KernelChoice::kReference);
  ASSERT_TRUE(list.ok());
  ExecuteOptions options;
  options.memory_limit_bytes = 2500;
  Result<ir::Literal> got =
      ExecuteInstructionList(*list, {Ramp()}, interp::DeviceContext{}, options);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), HasSubstr("out of memory at %b (add)"));
  EXPECT_THAT(got.status().message(),
              HasSubstr("its 1.00 KiB result takes the device's live buffers to 3.00 KiB, past "
                        "the 2.44 KiB it may use"));
}

TEST(DeviceExecutorTest, ArgumentsOfTheWrongShapeAreRejectedByName) {
  std::unique_ptr<ir::Module> module = Parse(kChain);
  Result<InstructionList> list = CompileInstructionList(*module);
  ASSERT_TRUE(list.ok());
  Result<ir::Literal> got = ExecuteInstructionList(
      *list, {ir::Literal::CreateZeros(ir::Shape::Array(ir::DType::kF32, {255}))},
      interp::DeviceContext{});
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("parameter %p expects f32[256]"));
}

TEST(DeviceExecutorTest, TheTraceHasOneEventPerInstructionInOrderAndLoadsAsChromeTrace) {
  std::unique_ptr<ir::Module> module = Parse(kChain);
  Result<InstructionList> list = CompileInstructionList(*module, KernelChoice::kReference);
  ASSERT_TRUE(list.ok());
  ExecuteOptions options;
  options.trace = true;
  ExecutionProfile profile;
  ASSERT_TRUE(
      ExecuteInstructionList(*list, {Ramp()}, interp::DeviceContext{}, options, &profile).ok());
  ASSERT_EQ(profile.events.size(), list->steps.size());
  for (size_t i = 0; i < profile.events.size(); ++i) {
    EXPECT_EQ(profile.events[i].instruction, list->steps[i].instruction);
    EXPECT_FALSE(profile.events[i].collective);
    EXPECT_GE(profile.events[i].duration_s, 0);
    if (i > 0) {
      EXPECT_GE(profile.events[i].start_s, profile.events[i - 1].start_s);
    }
  }

  ExecutionTrace trace(2);
  trace.Add(1, profile.events);
  trace.AddSpan({"step 1", 0.0, 1e-3});
  const nlohmann::json json = nlohmann::json::parse(trace.ToChromeTrace());
  std::vector<std::string> device_one;
  int64_t steps = 0;
  for (const nlohmann::json& event : json["traceEvents"]) {
    if (event["ph"] != "X") continue;
    if (event["tid"] == 1) device_one.push_back(event["name"]);
    if (event["cat"] == "step") ++steps;
  }
  EXPECT_EQ(device_one, (std::vector<std::string>{"a", "b", "c", "t"}));
  EXPECT_EQ(steps, 1);
  EXPECT_EQ(json["otherData"]["kernels"], 4);
}

TEST(DeviceExecutorTest, ALoopIsOneTraceEventThatCountsTheValuesInside) {
  std::unique_ptr<ir::Module> module = Parse(kUpdate);
  Result<InstructionList> list = CompileInstructionList(*module);
  ASSERT_TRUE(list.ok());
  ExecuteOptions options;
  options.trace = true;
  ExecutionProfile profile;
  ASSERT_TRUE(
      ExecuteInstructionList(*list, {Ramp(), Ramp()}, interp::DeviceContext{}, options, &profile)
          .ok());
  ExecutionTrace trace(1);
  trace.Add(0, profile.events);
  const nlohmann::json json = nlohmann::json::parse(trace.ToChromeTrace());
  std::vector<std::string> loops;
  for (const nlohmann::json& event : json["traceEvents"]) {
    if (event.value("cat", "") != "loop") continue;  // metadata events have no category
    loops.push_back(event["name"]);
    EXPECT_EQ(event["args"]["fused_values"], 5);
  }
  EXPECT_EQ(loops, std::vector<std::string>{"next"});
}

}  // namespace
}  // namespace alpa::runtime
