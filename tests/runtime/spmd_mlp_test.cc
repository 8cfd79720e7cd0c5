// A two-layer MLP's loss as an SPMD program, written by hand as XLA's partitioner would emit it,
// equals the unsplit program's loss evaluated on one device:
//   loss = sum((relu(x w1) w2 - t)^2) / batch
// Data parallel: x and t split on the batch, weights replicated, the local sums all-reduced.
// Tensor parallel (Megatron): w1 split on its columns and w2 on its rows, so each device holds
// a partial product of the second layer, all-reduced before the loss.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "runtime/spmd_executor.h"

namespace alpa::runtime {
namespace {

using ir::DType;
using ir::Literal;

constexpr int64_t kBatch = 8, kIn = 4, kHidden = 8, kOut = 3;

// The MLP loss with local sizes; `reduce_partial` all-reduces the second layer's product and
// `reduce_loss` the loss sum, over all devices. Global batch kBatch divides the sum.
std::string MlpText(int64_t batch, int64_t hidden, bool reduce_partial, bool reduce_loss) {
  return fmt::format(
      R"(HloModule mlp
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}}
ENTRY e {{
  x = f32[{b},{i}] parameter(0)
  w1 = f32[{i},{h}] parameter(1)
  w2 = f32[{h},{o}] parameter(2)
  t = f32[{b},{o}] parameter(3)
  h = f32[{b},{h}] dot(x, w1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  zero = f32[] constant(0)
  zeros = f32[{b},{h}] broadcast(zero), dimensions={{}}
  relu = f32[{b},{h}] maximum(h, zeros)
  partial = f32[{b},{o}] dot(relu, w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  {y}
  d = f32[{b},{o}] subtract(y, t)
  sq = f32[{b},{o}] multiply(d, d)
  local = f32[] reduce(sq, zero), dimensions={{0,1}}, to_apply=add
  {sum}
  n = f32[] constant({n})
  ROOT loss = f32[] divide(sum, n)
}}
)",
      fmt::arg("b", batch), fmt::arg("i", kIn), fmt::arg("h", hidden), fmt::arg("o", kOut),
      fmt::arg("n", kBatch),
      fmt::arg("y", reduce_partial ? fmt::format("y = f32[{},{}] all-reduce(partial), "
                                                 "channel_id=1, replica_groups={{}}, "
                                                 "use_global_device_ids=true, to_apply=add",
                                                 batch, kOut)
                                   : fmt::format("y = f32[{},{}] copy(partial)", batch, kOut)),
      fmt::arg("sum", reduce_loss ? "sum = f32[] all-reduce(local), channel_id=2, "
                                    "replica_groups={}, "
                                    "use_global_device_ids=true, to_apply=add"
                                  : "sum = f32[] copy(local)"));
}

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(text, "test");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// A [rows, cols] f32 matrix of smooth pseudo-random values, fixed by `seed`.
Literal Matrix(int64_t rows, int64_t cols, double seed) {
  std::vector<double> values;
  for (int64_t i = 0; i < rows * cols; ++i) values.push_back(std::sin(seed + 0.37 * i));
  return Literal::FromDoubles(ir::Shape::Array(DType::kF32, {rows, cols}), values);
}

// Rows [begin, begin + count) or columns [begin, begin + count) of a matrix.
Literal Rows(const Literal& m, int64_t begin, int64_t count) {
  const int64_t cols = m.shape().dim(1);
  std::vector<double> values;
  for (int64_t i = begin * cols; i < (begin + count) * cols; ++i) values.push_back(m.GetDouble(i));
  return Literal::FromDoubles(ir::Shape::Array(DType::kF32, {count, cols}), values);
}
Literal Columns(const Literal& m, int64_t begin, int64_t count) {
  const int64_t rows = m.shape().dim(0), cols = m.shape().dim(1);
  std::vector<double> values;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = begin; c < begin + count; ++c) values.push_back(m.GetDouble(r * cols + c));
  }
  return Literal::FromDoubles(ir::Shape::Array(DType::kF32, {rows, count}), values);
}

struct Inputs {
  Literal x = Matrix(kBatch, kIn, 0.1);
  Literal w1 = Matrix(kIn, kHidden, 1.3);
  Literal w2 = Matrix(kHidden, kOut, 2.9);
  Literal t = Matrix(kBatch, kOut, 4.7);
};

double ReferenceLoss(const Inputs& in) {
  std::unique_ptr<ir::Module> module = Parse(MlpText(kBatch, kHidden, false, false));
  if (module == nullptr) return NAN;
  Result<Literal> loss = interp::EvaluateModule(*module, {in.x, in.w1, in.w2, in.t});
  EXPECT_TRUE(loss.ok()) << loss.status().ToString();
  return loss.ok() ? loss->GetDouble(0) : NAN;
}

void ExpectEveryDeviceLoss(const Result<std::vector<std::vector<Literal>>>& outputs,
                           int64_t devices, double expected) {
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    ASSERT_EQ((*outputs)[d].size(), 1u);
    EXPECT_NEAR((*outputs)[d][0].GetDouble(0), expected, 1e-5) << "device " << d;
  }
}

TEST(SpmdMlpTest, DataParallelLossEqualsTheUnsplitLoss) {
  const Inputs in;
  const double expected = ReferenceLoss(in);
  ASSERT_GT(expected, 0.0);
  for (int64_t devices : {2, 4}) {
    SCOPED_TRACE(devices);
    const int64_t local = kBatch / devices;
    std::unique_ptr<ir::Module> program = Parse(MlpText(local, kHidden, false, true));
    ASSERT_NE(program, nullptr);
    std::vector<std::vector<Literal>> arguments;
    for (int64_t d = 0; d < devices; ++d) {
      arguments.push_back(
          {Rows(in.x, d * local, local), in.w1, in.w2, Rows(in.t, d * local, local)});
    }
    ExpectEveryDeviceLoss(RunSpmdProgram(*program, std::move(arguments)), devices, expected);
  }
}

TEST(SpmdMlpTest, TensorParallelLossEqualsTheUnsplitLoss) {
  const Inputs in;
  const double expected = ReferenceLoss(in);
  for (int64_t devices : {2, 4}) {
    SCOPED_TRACE(devices);
    const int64_t local = kHidden / devices;
    // The local loss sum is already the whole batch's on every device: no second all-reduce.
    std::unique_ptr<ir::Module> program = Parse(MlpText(kBatch, local, true, false));
    ASSERT_NE(program, nullptr);
    std::vector<std::vector<Literal>> arguments;
    for (int64_t d = 0; d < devices; ++d) {
      arguments.push_back(
          {in.x, Columns(in.w1, d * local, local), Rows(in.w2, d * local, local), in.t});
    }
    ExpectEveryDeviceLoss(RunSpmdProgram(*program, std::move(arguments)), devices, expected);
  }
}

}  // namespace
}  // namespace alpa::runtime
