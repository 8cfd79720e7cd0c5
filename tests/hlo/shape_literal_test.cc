// Shapes (ParseShape) and constant literals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "test_util.h"

namespace alpa::hlo {
namespace {

using testing::FirstErrorLine;
using testing::Get;
using testing::ParseOk;
using ::testing::StartsWith;

TEST(ShapeTest, ArraysLayoutsAndTuples) {
  auto shape = ParseShape("f32[8,16]{1,0}");
  ASSERT_TRUE(shape.ok());
  EXPECT_THAT(shape->dtype(), ir::DType::kF32);
  EXPECT_EQ(shape->dims(), (std::vector<int64_t>{8, 16}));
  ASSERT_TRUE(shape->layout().has_value());
  EXPECT_EQ(shape->layout()->minor_to_major, (std::vector<int64_t>{1, 0}));

  auto tiled = ParseShape("f32[128,8]{1,0:T(8,128)(2,1)S(5)}");
  ASSERT_TRUE(tiled.ok());
  EXPECT_EQ(tiled->layout()->extra, "T(8,128)(2,1)S(5)");
  EXPECT_EQ(tiled->ToString(), "f32[128,8]{1,0:T(8,128)(2,1)S(5)}");

  auto scalar = ParseShape("s64[]{:T(128)}");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->rank(), 0);
  EXPECT_EQ(scalar->ToString(), "s64[]{:T(128)}");

  auto tuple = ParseShape("((f32[], s32[4]),/*index=1*/ pred[2,2], token[], ())");
  ASSERT_TRUE(tuple.ok());
  ASSERT_TRUE(tuple->IsTuple());
  EXPECT_EQ(tuple->tuple_size(), 4);
  EXPECT_EQ(tuple->tuple_shape(0).tuple_size(), 2);
  EXPECT_TRUE(tuple->tuple_shape(2).IsToken());
  EXPECT_EQ(tuple->ToString(), "((f32[], s32[4]), pred[2,2], token[], ())");

  auto bounded = ParseShape("f32[<=10,20]");
  ASSERT_TRUE(bounded.ok());
  EXPECT_TRUE(bounded->is_dynamic_dim(0));
  EXPECT_FALSE(bounded->is_dynamic_dim(1));

  // A huge shape is a shape; only reading a literal of it is bounded by the text.
  auto huge = ParseShape("f32[99999999999]");
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->dim(0), 99999999999);
}

TEST(ShapeTest, Errors) {
  EXPECT_THAT(ParseShape("f33[2]").status().message(),
              StartsWith("<shape>:1:1: unknown element type 'f33', ex"));
  EXPECT_THAT(ParseShape("f32[2").status().message(),
              StartsWith("<shape>:1:6: found end of input, expected ',' or ']' in "));
  EXPECT_THAT(ParseShape("f32[-1]").status().message(),
              StartsWith("<shape>:1:5: dimension size -1 is negati"));
  EXPECT_EQ(ParseShape("f32[?]").status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(ParseShape("f32[4294967296,4294967296]").status().message(),
              StartsWith("<shape>:1:1: shape has more than 2^63 elemen"));
  EXPECT_THAT(ParseShape("f32[2] x").status().message(),
              StartsWith("<shape>:1:8: found identifier 'x', expected end of in"));
  std::string deep(300, '(');
  EXPECT_THAT(ParseShape(deep).status().message(),
              StartsWith("<shape>:1:257: shape nested deeper than 256 lev"));
}

// Wraps constants into a module and returns it parsed.
std::unique_ptr<ir::Module> Constants(std::string_view body) {
  return ParseOk(std::string("ENTRY e {\n") + std::string(body) + "\n}\n");
}

TEST(LiteralTest, ScalarsArraysAndSpecials) {
  auto module = Constants(R"(
  a = f32[] constant(1e-05)
  b = s32[] constant(-1)
  c = pred[] constant(false)
  d = f32[3] constant({-inf, inf, nan})
  e = s32[2,3] constant({ { 1, 2, 3 }, { 2, 20, 26 } })
  f = bf16[0] constant({})
  g = c64[2] constant({(0, 0), (1.5, -2)})
  h = u64[] constant(18446744073709551615)
  ROOT t = (f32[], s32[2]) constant((2.5, {7, 8})))");
  ASSERT_NE(module, nullptr);
  const auto& a = *Get(*module, "a").attributes().literal;
  EXPECT_FLOAT_EQ(static_cast<float>(a.GetDouble(0)), 1e-05f);
  EXPECT_EQ(Get(*module, "b").attributes().literal->GetInt(0), -1);
  EXPECT_EQ(Get(*module, "c").attributes().literal->GetInt(0), 0);
  const auto& d = *Get(*module, "d").attributes().literal;
  EXPECT_TRUE(std::isinf(d.GetDouble(0)) && d.GetDouble(0) < 0);
  EXPECT_TRUE(std::isinf(d.GetDouble(1)) && d.GetDouble(1) > 0);
  EXPECT_TRUE(std::isnan(d.GetDouble(2)));
  const auto& e = *Get(*module, "e").attributes().literal;
  EXPECT_EQ(e.GetInt(4), 20);  // row-major: {1,2,3,2,20,26}
  EXPECT_EQ(e.ToString(), "{ {1, 2, 3}, {2, 20, 26} }");
  EXPECT_EQ(Get(*module, "f").attributes().literal->element_count(), 0);
  const auto& g = *Get(*module, "g").attributes().literal;
  EXPECT_EQ(g.GetComplex(1), std::complex<double>(1.5, -2));
  EXPECT_EQ(static_cast<uint64_t>(Get(*module, "h").attributes().literal->GetInt(0)),
            18446744073709551615u);
  const auto& t = *Get(*module, "t").attributes().literal;
  ASSERT_EQ(t.tuple_elements().size(), 2u);
  EXPECT_DOUBLE_EQ(t.tuple_element(0).GetDouble(0), 2.5);
  EXPECT_EQ(t.tuple_element(1).GetInt(1), 8);
  EXPECT_EQ(PrintInstruction(Get(*module, "t")), "%t = (f32[], s32[2]) constant((2.5, {7, 8}))");
}

TEST(LiteralTest, ElidedConstantOfAnySize) {
  auto module = Constants("ROOT big = f32[99999999999] constant({...})");
  ASSERT_NE(module, nullptr);
  const auto& literal = *Get(*module, "big").attributes().literal;
  EXPECT_TRUE(literal.is_elided());
  EXPECT_EQ(PrintInstruction(Get(*module, "big")), "%big = f32[99999999999] constant({...})");
}

TEST(LiteralTest, ElementCountMustMatchTheShape) {
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}"),
            "test.hlo:2:28: found 2 elements in dimension 0 of a f32[3] literal, expected 3");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT c = f32[1] constant({1, 2})\n}"),
            "test.hlo:2:32: too many elements in dimension 0 of a f32[1] literal, "
            "expected 1");
  // The size comes from the shape, but only elements actually written are ever stored.
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT c = f32[99999999999] constant({1})\n}"),
            "test.hlo:2:38: found 1 elements in dimension 0 of a f32[99999999999] literal, "
            "expected 99999999999");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT c = f32[2,2] constant({1, 2})\n}"),
            "test.hlo:2:31: found integer 1, expected '{' for dimension 1 of a f32[2,2] "
            "literal");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT c = s8[] constant(300)\n}"),
            "test.hlo:2:26: value 300 is out of range for s8, expected -128..127");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT c = s32[] constant(1.5)\n}"),
            "test.hlo:2:27: found number 1.5, expected an integer for a s32 element");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT c = (f32[], f32[]) constant((1))\n}"),
            "test.hlo:2:38: found ')', expected ',' between tuple elements");
}

TEST(LiteralTest, PrintsShortestRoundTrippingFloats) {
  auto module = Constants("ROOT c = f32[3] constant({0.1, 1e-05, -3.4028235e+38})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(PrintInstruction(Get(*module, "c")),
            "%c = f32[3] constant({0.1, 1e-05, -3.4028235e+38})");
}

}  // namespace
}  // namespace alpa::hlo
