// The loss and batches of an imported forward graph (models/forward_loss.h).
#include "models/forward_loss.h"

#include <gtest/gtest.h>

#include "interp/evaluator.h"

namespace alpa::models {
namespace {

using ir::Instruction;

TEST(ForwardLossTest, CrossEntropyOfLogitsOverTheLastDimension) {
  ir::ModuleBuilder mb("ce");
  ir::ComputationBuilder b = mb.NewComputation("loss");
  Instruction* logits = b.Parameter(0, ir::Shape::Array(ir::DType::kF32, {2, 3}), "logits");
  Result<Instruction*> loss = AppendLoss(b, logits, LossKind::kCrossEntropy, 1);
  ASSERT_TRUE(loss.ok()) << loss.status().message();
  Result<ir::Computation*> entry = b.Build(*loss);
  ASSERT_TRUE(entry.ok()) << entry.status().message();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*entry);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<ir::Literal> arguments;
  arguments.push_back(
      ir::Literal::FromDoubles(ir::Shape::Array(ir::DType::kF32, {2, 3}), {0, 1, 2, 1, 1, 1}));
  arguments.push_back(ir::Literal::FromInts(ir::Shape::Array(ir::DType::kS32, {2}), {2, 0}));
  Result<ir::Literal> value = interp::EvaluateModule(**module, std::move(arguments));
  ASSERT_TRUE(value.ok()) << value.status().message();
  // -log softmax: row 0 picks 2 of {0, 1, 2}; row 1 picks one of three equal logits.
  const double row0 = std::log(std::exp(0.0) + std::exp(1.0) + std::exp(2.0)) - 2;
  EXPECT_NEAR(value->GetDouble(0), (row0 + std::log(3.0)) / 2, 1e-6);
  // Its labels' ids stay below the classes they are compared with.
  EXPECT_EQ(IndexBound(*(*module)->entry(), *(*module)->entry()->parameters()[1]), 3);
}

TEST(ForwardLossTest, ALossThatDoesNotFitTheOutputSaysWhichDoes) {
  ir::ModuleBuilder mb("bad");
  ir::ComputationBuilder b = mb.NewComputation("loss");
  Instruction* vector = b.Parameter(0, ir::Shape::Array(ir::DType::kF32, {4}), "v");
  Instruction* scalar = b.Parameter(1, ir::Shape::Scalar(ir::DType::kF32), "s");
  Result<Instruction*> output = AppendLoss(b, vector, LossKind::kOutput, 2);
  ASSERT_FALSE(output.ok());
  EXPECT_NE(output.status().message().find("not a scalar; use --loss cross-entropy"),
            std::string::npos);
  Result<Instruction*> mse = AppendLoss(b, scalar, LossKind::kMeanSquaredError, 2);
  ASSERT_FALSE(mse.ok());
  EXPECT_NE(mse.status().message().find("a scalar; use --loss output"), std::string::npos);
  EXPECT_FALSE(ParseLossKind("hinge").ok());
}

TEST(ForwardLossTest, IdsOfAnEmbeddingStayBelowItsRows) {
  ir::ModuleBuilder mb("embed");
  ir::ComputationBuilder b = mb.NewComputation("loss");
  Instruction* table = b.Parameter(0, ir::Shape::Array(ir::DType::kF32, {10, 4}), "table");
  Instruction* ids = b.Parameter(1, ir::Shape::Array(ir::DType::kS64, {2, 3}), "ids");
  ir::GatherDimensionNumbers numbers;
  numbers.offset_dims = {2};
  numbers.collapsed_slice_dims = {0};
  numbers.start_index_map = {0};
  numbers.index_vector_dim = 2;
  Instruction* rows = b.Gather(table, b.Convert(ids, ir::DType::kS32), numbers, {1, 4});
  Result<ir::Computation*> entry = b.Build(b.Sum(rows, {0, 1, 2}));
  ASSERT_TRUE(entry.ok()) << entry.status().message();
  EXPECT_EQ(IndexBound(**entry, *ids), 10);
  EXPECT_EQ(IndexBound(**entry, *table), 0);

  // Batches: ids below the bound, the same four batches in turn.
  BatchGenerator batches =
      ForwardBatches({ids->shape()}, {10}, ir::Shape::Scalar(ir::DType::kF32), LossKind::kOutput);
  const std::vector<ir::Literal> first = batches(2, 1);
  ASSERT_EQ(first.size(), 1u);
  for (int64_t i = 0; i < first[0].element_count(); ++i) {
    EXPECT_GE(first[0].GetInt(i), 0);
    EXPECT_LT(first[0].GetInt(i), 10);
  }
  EXPECT_EQ(batches(2, 1 + kBatchPool)[0], first[0]);
  EXPECT_FALSE(batches(2, 2)[0] == first[0]);
}

}  // namespace
}  // namespace alpa::models
