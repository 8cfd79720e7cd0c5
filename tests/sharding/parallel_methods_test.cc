// The parallel methods' pins (sharding/parallel_methods.h) on plain data, and the next values a
// train step's root gives them.
#include "sharding/parallel_methods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/parser.h"

namespace alpa::sharding {
namespace {

using ::testing::HasSubstr;
using Role = cost::ParameterRole;

// x (batch), w (weight, next value w2), w.m (optimizer state, next value m2), step (other).
std::vector<MethodParameter> Step() {
  return {{"x", {16, 8}, Role::kBatch, ""},
          {"w", {8, 32}, Role::kWeight, "w2"},
          {"w.m", {8, 32}, Role::kOptimizerState, "m2"},
          {"b", {6}, Role::kWeight, "b2"},
          {"step", {}, Role::kOther, "step2"}};
}

std::map<std::string, std::string> Readable(const std::map<std::string, LeafSpecs>& pins) {
  std::map<std::string, std::string> out;
  for (const auto& [name, specs] : pins) out[name] = ToString(specs.at(0));
  return out;
}

TEST(ParallelMethodsTest, NamesRoundTrip) {
  for (ParallelMethod method : {ParallelMethod::kShard, ParallelMethod::kData,
                                ParallelMethod::kZero2, ParallelMethod::kZero3}) {
    Result<ParallelMethod> parsed = ParseParallelMethod(ParallelMethodName(method));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, method);
  }
  Result<ParallelMethod> bogus = ParseParallelMethod("bogus");
  ASSERT_FALSE(bogus.ok());
  EXPECT_THAT(bogus.status().message(), HasSubstr("'bogus'"));
}

TEST(ParallelMethodsTest, ShardPinsNothing) {
  Result<std::map<std::string, LeafSpecs>> pins =
      MethodPins(ParallelMethod::kShard, {2, 2}, Step());
  ASSERT_TRUE(pins.ok());
  EXPECT_TRUE(pins->empty());
}

TEST(ParallelMethodsTest, DataSplitsTheBatchAndReplicatesTheRest) {
  Result<std::map<std::string, LeafSpecs>> pins = MethodPins(ParallelMethod::kData, {4}, Step());
  ASSERT_TRUE(pins.ok()) << pins.status().message();
  const std::map<std::string, std::string> expected = {
      {"x", "[S0,R]"}, {"w", "[R,R]"}, {"w2", "[R,R]"}, {"w.m", "[R,R]"},
      {"m2", "[R,R]"}, {"b", "[R]"},   {"b2", "[R]"}};
  EXPECT_EQ(Readable(*pins), expected);  // the step counter is left to the solver
}

TEST(ParallelMethodsTest, Zero2SplitsTheStateOnItsLargestDivisibleDim) {
  Result<std::map<std::string, LeafSpecs>> pins = MethodPins(ParallelMethod::kZero2, {4}, Step());
  ASSERT_TRUE(pins.ok()) << pins.status().message();
  const std::map<std::string, std::string> expected = {
      {"x", "[S0,R]"},  {"w", "[R,R]"}, {"w2", "[R,R]"}, {"w.m", "[R,S0]"},
      {"m2", "[R,S0]"}, {"b", "[R]"},   {"b2", "[R]"}};
  EXPECT_EQ(Readable(*pins), expected);
}

TEST(ParallelMethodsTest, Zero3SplitsWeightsLikeTheirState) {
  Result<std::map<std::string, LeafSpecs>> pins = MethodPins(ParallelMethod::kZero3, {4}, Step());
  ASSERT_TRUE(pins.ok()) << pins.status().message();
  const std::map<std::string, std::string> expected = {
      {"x", "[S0,R]"},  {"w", "[R,S0]"}, {"w2", "[R,S0]"}, {"w.m", "[R,S0]"},
      {"m2", "[R,S0]"}, {"b", "[R]"},    {"b2", "[R]"}};  // 6 does not divide by 4
  EXPECT_EQ(Readable(*pins), expected);
}

// One device holds whole arrays: every method pins replicated layouts, which a 1-device mesh's
// strategies offer (a split pin there was an error: "no strategy lays it out as [S0,R]").
TEST(ParallelMethodsTest, OneDeviceReplicatesEverything) {
  for (ParallelMethod method :
       {ParallelMethod::kData, ParallelMethod::kZero2, ParallelMethod::kZero3}) {
    Result<std::map<std::string, LeafSpecs>> pins = MethodPins(method, {1}, Step());
    ASSERT_TRUE(pins.ok()) << pins.status().message();
    const std::map<std::string, std::string> expected = {
        {"x", "[R,R]"},  {"w", "[R,R]"}, {"w2", "[R,R]"}, {"w.m", "[R,R]"},
        {"m2", "[R,R]"}, {"b", "[R]"},   {"b2", "[R]"}};
    EXPECT_EQ(Readable(*pins), expected) << ParallelMethodName(method);
  }
}

TEST(ParallelMethodsTest, TieGoesToTheFirstDim) {
  std::vector<MethodParameter> step = {{"x", {8}, Role::kBatch, ""},
                                       {"w", {8, 8}, Role::kWeight, ""}};
  Result<std::map<std::string, LeafSpecs>> pins = MethodPins(ParallelMethod::kZero3, {2}, step);
  ASSERT_TRUE(pins.ok());
  EXPECT_EQ(ToString(pins->at("w")[0]), "[S0,R]");
}

TEST(ParallelMethodsTest, Errors) {
  Result<std::map<std::string, LeafSpecs>> two_d =
      MethodPins(ParallelMethod::kData, {2, 2}, Step());
  ASSERT_FALSE(two_d.ok());
  EXPECT_THAT(two_d.status().message(), HasSubstr("1-D mesh"));

  Result<std::map<std::string, LeafSpecs>> indivisible =
      MethodPins(ParallelMethod::kData, {3}, Step());
  ASSERT_FALSE(indivisible.ok());
  EXPECT_THAT(indivisible.status().message(), HasSubstr("%x has 16 rows"));

  std::vector<MethodParameter> no_batch = {{"w", {8, 8}, Role::kWeight, ""}};
  Result<std::map<std::string, LeafSpecs>> none = MethodPins(ParallelMethod::kZero2, {2}, no_batch);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("batch parameters"));
}

constexpr const char* kStep = R"(HloModule step
ENTRY %step {
  %w = f32[4,8] parameter(0)
  %x = f32[2,4] parameter(1)
  %neg = f32[4,8] negate(%w)
  %t = (f32[4,8], f32[2,4]) tuple(%neg, %x)
  %gte = f32[4,8] get-tuple-element(%t), index=0
  ROOT %root = (f32[2,4], f32[4,8]) tuple(%x, %gte)
}
)";

TEST(ParallelMethodsTest, StepParametersLookThroughTupleViews) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(kStep, "step.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  Result<std::vector<MethodParameter>> parameters =
      StepParameters(*(*module)->entry(), {Role::kWeight, Role::kBatch}, {1, -1});
  ASSERT_TRUE(parameters.ok()) << parameters.status().message();
  ASSERT_EQ(parameters->size(), 2u);
  EXPECT_EQ((*parameters)[0].name, "w");
  EXPECT_EQ((*parameters)[0].next_value, "neg");
  EXPECT_EQ((*parameters)[0].dims, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ((*parameters)[1].role, Role::kBatch);
  EXPECT_EQ((*parameters)[1].next_value, "");

  Result<std::vector<MethodParameter>> out_of_range =
      StepParameters(*(*module)->entry(), {Role::kWeight}, {5});
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(out_of_range.status().message(), HasSubstr("output 5"));
}

}  // namespace
}  // namespace alpa::sharding
