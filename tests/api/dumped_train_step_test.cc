// A dumped whole train step's parameter roles from its input_output_alias and data flow: state
// updated in place is a weight when a dot reads it and optimizer state when only the update
// does; inputs passed through or not aliased are the batch.
#include "api/dumped_train_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hlo/parser.h"

namespace alpa::api {
namespace {

using cost::ParameterRole;
using ::testing::HasSubstr;

std::unique_ptr<ir::Module> Parse(std::string_view text) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return std::move(module).value();
}

// One step of SGD with momentum on sum(x w): w the weight, m its momentum, x the batch (returned
// unchanged, as PyTorch/XLA does), lr a scalar, pos an input every row shares.
constexpr std::string_view kMomentumStep = R"(
HloModule momentum_step, input_output_alias={ {1}: (0, {}, must-alias), {2}: (1, {}, must-alias), {3}: (2, {}, must-alias) }

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY step {
  w = f32[8,4] parameter(0)
  m = f32[8,4] parameter(1)
  x = f32[16,8] parameter(2)
  lr = f32[] parameter(3)
  pos = f32[1,4] parameter(4)
  y = f32[16,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[16,4] broadcast(pos), dimensions={0,1}
  shifted = f32[16,4] add(y, b)
  zero = f32[] constant(0)
  loss = f32[] reduce(shifted, zero), dimensions={0,1}, to_apply=add
  one = f32[] constant(1)
  ones = f32[16,4] broadcast(one), dimensions={}
  g = f32[8,4] dot(x, ones), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  m2 = f32[8,4] add(m, g)
  rate = f32[8,4] broadcast(lr), dimensions={}
  delta = f32[8,4] multiply(rate, m2)
  w2 = f32[8,4] subtract(w, delta)
  ROOT t = (f32[], f32[8,4], f32[8,4], f32[16,8]) tuple(loss, w2, m2, x)
})";

TEST(DumpedTrainStepTest, RolesFromAliasesAndDataFlow) {
  const std::unique_ptr<ir::Module> module = Parse(kMomentumStep);
  Result<TrainStep> step = DescribeDumpedTrainStep(*module);
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  ASSERT_EQ(step->parameters.size(), 5u);
  const std::vector<sharding::MethodParameter>& p = step->parameters;
  EXPECT_EQ(p[0].role, ParameterRole::kWeight);
  EXPECT_EQ(p[0].next_value, "w2");
  EXPECT_EQ(p[1].role, ParameterRole::kOptimizerState);
  EXPECT_EQ(p[1].next_value, "m2");
  EXPECT_EQ(p[2].role, ParameterRole::kBatch);
  EXPECT_EQ(p[2].next_value, "");  // passed through, not updated
  EXPECT_EQ(p[3].role, ParameterRole::kOther);
  EXPECT_EQ(p[4].role, ParameterRole::kOther);  // leading dimension 1, not the batch's 16
}

TEST(DumpedTrainStepTest, APyTorchXlaStep) {
  std::ifstream file(std::string(ALPA_TESTDATA_DIR) + "/hlo/ptxla_mlp_mini_train_single.hlo");
  ASSERT_TRUE(file);
  std::stringstream text;
  text << file.rdbuf();
  const std::unique_ptr<ir::Module> module = Parse(text.str());
  Result<TrainStep> step = DescribeDumpedTrainStep(*module);
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  std::map<std::string, ParameterRole> roles;
  for (const sharding::MethodParameter& parameter : step->parameters) {
    roles[parameter.name] = parameter.role;
  }
  EXPECT_EQ(roles.at("p3.15"), ParameterRole::kWeight);  // f32[10,784]
  EXPECT_EQ(roles.at("p2.7"), ParameterRole::kWeight);   // f32[10], the bias
  EXPECT_EQ(roles.at("p4.24"), ParameterRole::kBatch);   // f32[32,784]
  EXPECT_EQ(roles.at("p1.6"), ParameterRole::kBatch);    // s64[32], the labels
  EXPECT_EQ(roles.at("p0.1"), ParameterRole::kOther);    // the learning rate
}

TEST(DumpedTrainStepTest, WhatTheModuleDoesNotCarryIsSaid) {
  std::string no_alias(kMomentumStep);
  const size_t header_end = no_alias.find("\n\nadd");
  const size_t alias = no_alias.find(", input_output_alias");
  no_alias.erase(alias, header_end - alias);
  Result<TrainStep> bare = DescribeDumpedTrainStep(*Parse(no_alias));
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(bare.status().message(), HasSubstr("has no input_output_alias"));
  EXPECT_THAT(bare.status().message(), HasSubstr("donate_argnums"));

  std::string nested(kMomentumStep);
  nested.replace(nested.find("{1}: (0, {}"), 11, "{1}: (0, {0}");
  Result<TrainStep> tuple = DescribeDumpedTrainStep(*Parse(nested));
  ASSERT_FALSE(tuple.ok());
  EXPECT_THAT(tuple.status().message(), HasSubstr("aliases inside a tuple"));

  // An optimizer-only graph (as PyTorch/XLA dumps the update apart from forward and backward).
  Result<TrainStep> no_weights = DescribeDumpedTrainStep(*Parse(R"(
HloModule update_only, input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {}, must-alias) }
ENTRY update {
  w = f32[8] parameter(0)
  m = f32[8] parameter(1)
  g = f32[8] parameter(2)
  m2 = f32[8] add(m, g)
  w2 = f32[8] subtract(w, m2)
  ROOT t = (f32[8], f32[8]) tuple(w2, m2)
})"));
  ASSERT_FALSE(no_weights.ok());
  EXPECT_THAT(no_weights.status().message(), HasSubstr("optimizer-only graph"));
}

}  // namespace
}  // namespace alpa::api
