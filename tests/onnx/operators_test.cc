// Each operator of the ONNX import on small cases, against ONNX's semantics written out here
// (numpy's, for the broadcasting and indexing rules), evaluated by the reference interpreter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "tests/onnx/onnx_graph_maker.h"

namespace alpa::onnx::testing {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::vector<double> Iota(int64_t n, double start = 0, double step = 1) {
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    values[static_cast<size_t>(i)] = start + step * static_cast<double>(i);
  return values;
}

std::vector<double> Evaluate(GraphMaker& g, std::vector<ir::Literal> inputs,
                             std::vector<int64_t> expected_dims) {
  Result<ir::Literal> result = ImportAndEvaluate(g.model(), std::move(inputs));
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok()) return {};
  EXPECT_EQ(result->shape().dims(), expected_dims);
  return Values(*result);
}

MATCHER(Near, "") {
  return std::fabs(std::get<0>(arg) - std::get<1>(arg)) <= 1e-5 * (1 + std::fabs(std::get<1>(arg)));
}

TEST(OnnxOperatorsTest, GemmTransposesScalesAndAddsABroadcastBias) {
  GraphMaker g;
  g.Input("a", {2, 3})
      .Initializer("w", {4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})
      .Initializer("c", {4}, {1, 2, 3, 4});
  ::onnx::NodeProto& gemm = g.Node("Gemm", {"a", "w", "c"}, {"y"});
  SetInt(gemm, "transB", 1);
  SetFloat(gemm, "alpha", 2);
  SetFloat(gemm, "beta", 0.5);
  g.Output("y");
  // y = 2 a w^T + 0.5 c; a = [[0,1,2],[3,4,5]]: a w^T = [[0,1,2,3],[3,4,5,12]].
  EXPECT_THAT(Evaluate(g, {F32({2, 3}, Iota(6))}, {2, 4}),
              Pointwise(Near(), std::vector<double>{0.5, 3, 5.5, 8, 6.5, 9, 11.5, 26}));
}

TEST(OnnxOperatorsTest, MatMulBroadcastsBatchDimensions) {
  GraphMaker g;
  g.Input("a", {2, 1, 2, 3}).Input("b", {3, 3, 2});
  g.Node("MatMul", {"a", "b"}, {"y"});
  g.Output("y");
  const std::vector<double> a = Iota(12), b = Iota(18, 1);
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int m = 0; m < 2; ++m) {
        for (int n = 0; n < 2; ++n) {
          double sum = 0;
          for (int k = 0; k < 3; ++k) sum += a[i * 6 + m * 3 + k] * b[j * 6 + k * 2 + n];
          expected.push_back(sum);
        }
      }
    }
  }
  EXPECT_THAT(Evaluate(g, {F32({2, 1, 2, 3}, a), F32({3, 3, 2}, b)}, {2, 3, 2, 2}),
              Pointwise(Near(), expected));
}

TEST(OnnxOperatorsTest, MatMulOfAVectorDropsItsDimension) {
  GraphMaker g;
  g.Input("a", {2, 3}).Input("v", {3});
  g.Node("MatMul", {"a", "v"}, {"y"});
  g.Output("y");
  EXPECT_THAT(Evaluate(g, {F32({2, 3}, Iota(6)), F32({3}, {1, 1, 1})}, {2}),
              Pointwise(Near(), std::vector<double>{3, 12}));
}

TEST(OnnxOperatorsTest, SoftmaxOverAnAxis) {
  GraphMaker g;
  g.Input("x", {2, 3});
  SetInt(g.Node("Softmax", {"x"}, {"y"}), "axis", 0);
  g.Output("y");
  const std::vector<double> x = {0, 1, 2, 3, 5, 7};
  std::vector<double> expected(6);
  for (int c = 0; c < 3; ++c) {
    const double sum = std::exp(x[c]) + std::exp(x[3 + c]);
    expected[c] = std::exp(x[c]) / sum;
    expected[3 + c] = std::exp(x[3 + c]) / sum;
  }
  EXPECT_THAT(Evaluate(g, {F32({2, 3}, x)}, {2, 3}), Pointwise(Near(), expected));
}

TEST(OnnxOperatorsTest, LayerNormalizationOverTheLastDimensions) {
  GraphMaker g;
  g.Input("x", {2, 4}).Initializer("s", {4}, {1, 2, 1, 2}).Initializer("b", {4}, {0, 0, 1, 1});
  SetFloat(g.Node("LayerNormalization", {"x", "s", "b"}, {"y"}), "epsilon", 1e-5f);
  g.Output("y");
  const std::vector<double> x = {1, 2, 3, 4, -1, 0, 0, 5};
  std::vector<double> expected;
  for (int r = 0; r < 2; ++r) {
    double mean = 0, variance = 0;
    for (int c = 0; c < 4; ++c) mean += x[r * 4 + c] / 4;
    for (int c = 0; c < 4; ++c) variance += (x[r * 4 + c] - mean) * (x[r * 4 + c] - mean) / 4;
    const double scale[] = {1, 2, 1, 2}, bias[] = {0, 0, 1, 1};
    for (int c = 0; c < 4; ++c) {
      expected.push_back((x[r * 4 + c] - mean) / std::sqrt(variance + 1e-5) * scale[c] + bias[c]);
    }
  }
  EXPECT_THAT(Evaluate(g, {F32({2, 4}, x)}, {2, 4}), Pointwise(Near(), expected));
}

TEST(OnnxOperatorsTest, GatherAlongASecondAxisPlacesTheIndicesThere) {
  GraphMaker g;
  g.Input("x", {2, 3, 2}).IntInitializer("i", {2, 2}, {2, 0, 1, 1});
  SetInt(g.Node("Gather", {"x", "i"}, {"y"}), "axis", 1);
  g.Output("y");
  // y[a, p, q, c] = x[a, i[p, q], c].
  const std::vector<double> x = Iota(12);
  std::vector<double> expected;
  const int index[] = {2, 0, 1, 1};
  for (int a = 0; a < 2; ++a) {
    for (int pq = 0; pq < 4; ++pq) {
      for (int c = 0; c < 2; ++c) expected.push_back(x[a * 6 + index[pq] * 2 + c]);
    }
  }
  EXPECT_THAT(Evaluate(g, {F32({2, 3, 2}, x)}, {2, 2, 2, 2}), ElementsAreArray(expected));
}

TEST(OnnxOperatorsTest, ShapeArithmeticFoldsIntoAReshape) {
  // The pattern torch exports for x.view(b, s, heads, -1): Shape, Gather, Unsqueeze, Concat.
  GraphMaker g;
  g.Input("x", {2, 3, 4});
  g.Node("Shape", {"x"}, {"shape"});
  g.IntInitializer("zero", {}, {0}).IntInitializer("one", {}, {1});
  g.IntInitializer("axes", {1}, {0}).IntInitializer("rest", {2}, {2, -1});
  g.Node("Gather", {"shape", "zero"}, {"b"});
  g.Node("Gather", {"shape", "one"}, {"s"});
  g.Node("Unsqueeze", {"b", "axes"}, {"b1"});
  g.Node("Unsqueeze", {"s", "axes"}, {"s1"});
  SetInt(g.Node("Concat", {"b1", "s1", "rest"}, {"target"}), "axis", 0);
  g.Node("Reshape", {"x", "target"}, {"y"});
  g.Output("y");
  EXPECT_THAT(Evaluate(g, {F32({2, 3, 4}, Iota(24))}, {2, 3, 2, 2}), ElementsAreArray(Iota(24)));
}

TEST(OnnxOperatorsTest, ReshapeCopiesZerosAndInfersMinusOne) {
  GraphMaker g;
  g.Input("x", {2, 3, 4}).IntInitializer("shape", {3}, {0, -1, 2});
  g.Node("Reshape", {"x", "shape"}, {"y"});
  g.Output("y");
  EXPECT_THAT(Evaluate(g, {F32({2, 3, 4}, Iota(24))}, {2, 6, 2}), ElementsAreArray(Iota(24)));
}

TEST(OnnxOperatorsTest, SliceWithNegativeStartsStepsAndAClampedEnd) {
  GraphMaker g;
  g.Input("x", {3, 6});
  g.IntInitializer("starts", {2}, {-2, 1}).IntInitializer("ends", {2}, {100, 6});
  g.IntInitializer("axes", {2}, {0, 1}).IntInitializer("steps", {2}, {1, 2});
  g.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  g.Output("y");
  EXPECT_THAT(Evaluate(g, {F32({3, 6}, Iota(18))}, {2, 3}),
              ElementsAreArray(std::vector<double>{7, 9, 11, 13, 15, 17}));
}

TEST(OnnxOperatorsTest, SplitTransposeConcatSqueezeAndUnsqueeze) {
  GraphMaker g;
  g.Input("x", {2, 4});
  g.IntInitializer("sizes", {2}, {1, 3}).IntInitializer("axis0", {1}, {0});
  SetInt(g.Node("Split", {"x", "sizes"}, {"left", "right"}), "axis", 1);
  g.Node("Transpose", {"right"}, {"right_t"});         // [3, 2]
  g.Node("Unsqueeze", {"left", "axis0"}, {"left_u"});  // [1, 2, 1]
  g.IntInitializer("flat", {2}, {1, 2});
  g.Node("Squeeze", {"left_u"}, {"left_s"});          // [2]
  g.Node("Reshape", {"left_s", "flat"}, {"left_r"});  // [1, 2]
  SetInt(g.Node("Concat", {"right_t", "left_r"}, {"y"}), "axis", 0);
  g.Output("y");
  // x = [[0,1,2,3],[4,5,6,7]]: right^T = [[1,5],[2,6],[3,7]], left = [0, 4].
  EXPECT_THAT(Evaluate(g, {F32({2, 4}, Iota(8))}, {4, 2}),
              ElementsAreArray(std::vector<double>{1, 5, 2, 6, 3, 7, 0, 4}));
}

TEST(OnnxOperatorsTest, WhereOnAComparisonBroadcastsAllThree) {
  GraphMaker g;
  g.Input("x", {2, 3}).Initializer("zero", {}, {0}).Initializer("fill", {1}, {-1});
  g.Node("Greater", {"x", "zero"}, {"positive"});
  g.Node("Where", {"positive", "x", "fill"}, {"y"});
  g.Output("y");
  EXPECT_THAT(Evaluate(g, {F32({2, 3}, {-2, 3, 0, 5, -1, 7})}, {2, 3}),
              ElementsAreArray(std::vector<double>{-1, 3, -1, 5, -1, 7}));
}

TEST(OnnxOperatorsTest, ConvWithPaddingStridesGroupsAndBias) {
  GraphMaker g;
  g.Input("x", {1, 2, 4, 4})
      .Initializer("w", {2, 1, 3, 3}, std::vector<float>(18, 1.0f))
      .Initializer("b", {2}, {0, 100});
  ::onnx::NodeProto& conv = g.Node("Conv", {"x", "w", "b"}, {"y"});
  SetInt(conv, "group", 2);
  SetInts(conv, "kernel_shape", {3, 3});
  SetInts(conv, "pads", {1, 1, 1, 1});
  SetInts(conv, "strides", {2, 2});
  g.Output("y");
  const std::vector<double> x = Iota(32);
  std::vector<double> expected;
  for (int c = 0; c < 2; ++c) {
    for (int oy = 0; oy < 2; ++oy) {
      for (int ox = 0; ox < 2; ++ox) {
        double sum = c == 0 ? 0 : 100;
        for (int ky = 0; ky < 3; ++ky) {
          for (int kx = 0; kx < 3; ++kx) {
            const int iy = oy * 2 + ky - 1, ix = ox * 2 + kx - 1;
            if (iy >= 0 && iy < 4 && ix >= 0 && ix < 4) sum += x[c * 16 + iy * 4 + ix];
          }
        }
        expected.push_back(sum);
      }
    }
  }
  EXPECT_THAT(Evaluate(g, {F32({1, 2, 4, 4}, x)}, {1, 2, 2, 2}), Pointwise(Near(), expected));
}

TEST(OnnxOperatorsTest, BatchNormalizationInTrainingUsesTheBatchStatistics) {
  GraphMaker g;
  g.Input("x", {2, 2, 1, 2}).Initializer("scale", {2}, {1, 2}).Initializer("bias", {2}, {0, 1});
  g.Initializer("mean", {2}, {50, 50}).Initializer("var", {2}, {9, 9});
  ::onnx::NodeProto& bn =
      g.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "rm", "rv"});
  SetInt(bn, "training_mode", 1);
  SetFloat(bn, "epsilon", 0);
  g.Output("y");
  // Channel 0 holds {0, 1, 4, 5}: mean 2.5, variance 4.25; channel 1 {2, 3, 6, 7}: 4.5, 4.25.
  const std::vector<double> x = Iota(8);
  std::vector<double> expected(8);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 2; ++c) {
      for (int w = 0; w < 2; ++w) {
        const int i = n * 4 + c * 2 + w;
        expected[i] = (x[i] - (c == 0 ? 2.5 : 4.5)) / std::sqrt(4.25) * (c == 0 ? 1 : 2) + c;
      }
    }
  }
  EXPECT_THAT(Evaluate(g, {F32({2, 2, 1, 2}, x)}, {2, 2, 1, 2}), Pointwise(Near(), expected));
}

TEST(OnnxOperatorsTest, MaxPoolCeilModeKeepsTheLastPartialWindow) {
  GraphMaker g;
  g.Input("x", {1, 1, 3, 3});
  ::onnx::NodeProto& pool = g.Node("MaxPool", {"x"}, {"y"});
  SetInts(pool, "kernel_shape", {2, 2});
  SetInts(pool, "strides", {2, 2});
  SetInt(pool, "ceil_mode", 1);
  g.Output("y");
  EXPECT_THAT(Evaluate(g, {F32({1, 1, 3, 3}, Iota(9))}, {1, 1, 2, 2}),
              ElementsAreArray(std::vector<double>{4, 5, 7, 8}));
}

TEST(OnnxOperatorsTest, GlobalAveragePoolFlattenAndReduceMean) {
  GraphMaker g;
  g.Input("x", {2, 3, 2, 2});
  g.Node("GlobalAveragePool", {"x"}, {"pooled"});  // [2, 3, 1, 1]
  g.Node("Flatten", {"pooled"}, {"flat"});         // [2, 3]
  ::onnx::NodeProto& mean = g.Node("ReduceMean", {"flat"}, {"y"});
  SetInts(mean, "axes", {0});
  SetInt(mean, "keepdims", 0);
  g.Output("y");
  // pooled[n, c] = 12 n + 4 c + 1.5; the mean over n: 4 c + 7.5.
  EXPECT_THAT(Evaluate(g, {F32({2, 3, 2, 2}, Iota(24))}, {3}),
              Pointwise(Near(), std::vector<double>{7.5, 11.5, 15.5}));
}

TEST(OnnxOperatorsTest, TriluExpandErfAndPow) {
  GraphMaker g;
  g.Input("x", {3, 3}).IntInitializer("shape", {3}, {2, 3, 3}).Initializer("two", {}, {2});
  SetInt(g.Node("Trilu", {"x"}, {"lower"}), "upper", 0);
  g.Node("Expand", {"lower", "shape"}, {"expanded"});
  g.Node("Pow", {"expanded", "two"}, {"squared"});
  g.Node("Erf", {"squared"}, {"y"});
  g.Output("y");
  const std::vector<double> x = Iota(9, 0, 0.1);
  std::vector<double> expected;
  for (int copy = 0; copy < 2; ++copy) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c)
        expected.push_back(c <= r ? std::erf(x[r * 3 + c] * x[r * 3 + c]) : 0);
    }
  }
  EXPECT_THAT(Evaluate(g, {F32({3, 3}, x)}, {2, 3, 3}), Pointwise(Near(), expected));
}

TEST(OnnxOperatorsTest, TheBatchOptionResizesDimensionZeroThroughShapeArithmetic) {
  GraphMaker g;
  g.Input("x", {2, 4});
  g.Node("Shape", {"x"}, {"shape"});
  g.IntInitializer("last", {1}, {-1})
      .IntInitializer("start", {1}, {0})
      .IntInitializer("end", {1}, {1});
  g.Node("Slice", {"shape", "start", "end"}, {"batch"});
  g.IntInitializer("two", {1}, {2});
  SetInt(g.Node("Concat", {"batch", "two", "last"}, {"target"}), "axis", 0);
  g.Node("Reshape", {"x", "target"}, {"y"});
  g.Output("y");
  Result<ir::Literal> result = ImportAndEvaluate(g.model(), {F32({3, 4}, Iota(12))}, {.batch = 3});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->shape().dims(), (std::vector<int64_t>{3, 2, 2}));
}

TEST(OnnxOperatorsTest, AnUnsupportedOperatorIsNamedWithItsNodeAndOpset) {
  GraphMaker g;
  g.Input("x", {2});
  g.Node("NonMaxSuppression", {"x"}, {"y"});
  g.Output("y");
  const std::string error = ImportError(g.model());
  EXPECT_THAT(error, HasSubstr("node '/NonMaxSuppression_0' (NonMaxSuppression, opset 17)"));
  EXPECT_THAT(error, HasSubstr("does not support operator 'NonMaxSuppression'"));
  EXPECT_THAT(error, HasSubstr("LayerNormalization"));  // the list of what it supports
}

TEST(OnnxOperatorsTest, BadGraphsAreNamedErrors) {
  {
    GraphMaker g(12);
    g.Input("x", {2});
    g.Node("Relu", {"x"}, {"y"});
    g.Output("y");
    EXPECT_THAT(ImportError(g.model()), HasSubstr("opset 12 of the default domain is outside"));
  }
  {
    GraphMaker g;
    g.Input("x", {2});
    g.Node("Relu", {"nowhere"}, {"y"});
    g.Output("y");
    EXPECT_THAT(ImportError(g.model()),
                HasSubstr("input 'nowhere' is produced by no earlier node"));
  }
  {
    GraphMaker g;
    g.Input("x", {2, 3}).Input("shape", {2}, ::onnx::TensorProto::INT64);
    g.Node("Reshape", {"x", "shape"}, {"y"});
    g.Output("y");
    EXPECT_THAT(ImportError(g.model()), HasSubstr("must be integers known at import"));
  }
  {
    GraphMaker g;
    g.Input("x", {2, 3});
    g.Node("Relu", {"x"}, {"y"});
    g.Node("Relu", {"x"}, {"z"});
    g.Output("y").Output("z");
    EXPECT_THAT(ImportError(g.model()), HasSubstr("the graph has 2 outputs"));
  }
  {
    GraphMaker g;
    ::onnx::ValueInfoProto* input = g.model().mutable_graph()->add_input();
    input->set_name("x");
    input->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param(
        "batch");
    g.Node("Relu", {"x"}, {"y"});
    g.Output("y");
    EXPECT_THAT(ImportError(g.model()), HasSubstr("dimension 0 is symbolic ('batch')"));
  }
}

TEST(OnnxOperatorsTest, BuffersAreConstantsAndOnlyDifferentiableInitializersAreWeights) {
  // A mask buffer compared to 0 (as a causal mask is) is not trained; the scale is.
  GraphMaker g;
  g.Input("x", {2}).Initializer("mask", {2}, {1, 0}).Initializer("scale", {2}, {3, 3});
  g.Initializer("zero", {}, {0}).Initializer("unused", {2}, {9, 9});
  g.Node("Equal", {"mask", "zero"}, {"masked"});
  g.Node("Mul", {"x", "scale"}, {"scaled"});
  SetFloat(g.Node("Constant", {}, {"fill"}), "value_float", 0);
  g.Node("Where", {"masked", "fill", "scaled"}, {"y"});
  g.Output("y");
  Result<OnnxFile> file = CheckOnnxModel(g.model(), "test.onnx", "");
  ASSERT_TRUE(file.ok());
  ir::ModuleBuilder mb("test");
  ir::ComputationBuilder b = mb.NewComputation("main");
  Result<ImportedGraph> graph = ImportGraph(*file, b, {});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->weight_names, std::vector<std::string>{"scale"});
  EXPECT_THAT(Evaluate(g, {F32({2}, {1, 2})}, {2}), ElementsAreArray(std::vector<double>{3, 0}));
}

}  // namespace
}  // namespace alpa::onnx::testing
