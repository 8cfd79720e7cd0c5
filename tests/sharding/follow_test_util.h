// Test helper of the follow-style strategy generators: a context on a p3.16xlarge host viewed as
// a logical mesh, whose strategies_of answers with hand-made strategy sets (one strategy per
// given spec; instructions without one get a single replicated strategy), so that the tests do
// not depend on the other generators.
#ifndef ALPA_TESTS_SHARDING_FOLLOW_TEST_UTIL_H_
#define ALPA_TESTS_SHARDING_FOLLOW_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "cost/compute_cost.h"
#include "hlo/parser.h"
#include "ir/verifier.h"
#include "sharding/resharding.h"
#include "sharding/strategy.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding::testing {

class FollowTestEnv {
 public:
  explicit FollowTestEnv(std::vector<int64_t> mesh_shape) {
    // this is captured by strategies_of: the environment must not move.
    const int64_t devices =
        std::accumulate(mesh_shape.begin(), mesh_shape.end(), int64_t{1}, std::multiplies<>());
    cluster_ = *cluster::MakePresetCluster("p3.16xlarge", 1, devices);
    mesh_ = *cluster::MakeLogicalMesh(cluster_, cluster::WholeClusterMesh(cluster_), mesh_shape);
    pricer_ = std::make_unique<ReshardCostModel>(*ReshardCostModel::Create(cluster_, mesh_));
    ctx.cluster = &cluster_;
    ctx.mesh = &mesh_;
    ctx.device = cost::ThroughputOf(cluster_.hosts.front().device);
    ctx.pricer = pricer_.get();
    ctx.strategies_of = [this](const ir::Instruction& instruction) -> const StrategySet& {
      auto it = sets_.find(&instruction);
      if (it == sets_.end()) {
        it = sets_.emplace(&instruction, MakeSet({ReplicatedLeaves(instruction.shape())})).first;
      }
      return it->second;
    };
  }

  // Parses and verifies `text`; the instructions are found by name with Get.
  void Parse(std::string_view text) {
    auto module = hlo::ParseHloModule(text, "test.hlo");
    ASSERT_TRUE(module.ok()) << module.status().message();
    const Status verified = ir::VerifyModule(**module);
    ASSERT_TRUE(verified.ok()) << verified.message();
    module_ = std::move(module).value();
  }
  const ir::Instruction& Get(std::string_view name) const {
    const ir::Instruction* instruction = module_->entry()->GetInstruction(name);
    EXPECT_NE(instruction, nullptr) << name;
    return *instruction;
  }

  // The strategies of instruction `name` seen by its users: one per spec.
  void SetSpecs(std::string_view name, const std::vector<ShardingSpec>& specs) {
    std::vector<LeafSpecs> outputs;
    for (const ShardingSpec& spec : specs) outputs.push_back({spec});
    sets_[&Get(name)] = MakeSet(outputs);
  }

  FollowTestEnv(const FollowTestEnv&) = delete;
  FollowTestEnv& operator=(const FollowTestEnv&) = delete;

  StrategyContext ctx;

 private:
  static StrategySet MakeSet(const std::vector<LeafSpecs>& outputs) {
    StrategySet set;
    for (const LeafSpecs& output : outputs) {
      Strategy strategy;
      strategy.name = ToString(output.front());
      strategy.output = output;
      set.strategies.push_back(std::move(strategy));
    }
    return set;
  }

  cluster::ClusterSpec cluster_;
  cluster::LogicalMesh mesh_;
  std::unique_ptr<ReshardCostModel> pricer_;
  std::unique_ptr<ir::Module> module_;
  std::map<const ir::Instruction*, StrategySet> sets_;
};

// Every spec of every strategy passes CheckSpec for its tensor.
inline void ExpectValidSpecs(const StrategySet& set, const ir::Instruction& instruction,
                             const std::vector<int64_t>& mesh_shape) {
  for (const Strategy& strategy : set.strategies) {
    const std::vector<const ir::Shape*> leaves = ShapeLeaves(instruction.shape());
    ASSERT_EQ(strategy.output.size(), leaves.size()) << strategy.name;
    for (size_t i = 0; i < leaves.size(); ++i) {
      EXPECT_TRUE(CheckSpec(strategy.output[i], mesh_shape, leaves[i]->dims()).ok())
          << strategy.name;
    }
    ASSERT_EQ(strategy.operands.size(), static_cast<size_t>(instruction.operand_count()));
    for (int64_t k = 0; k < instruction.operand_count(); ++k) {
      const std::vector<const ir::Shape*> operand = ShapeLeaves(instruction.operand(k)->shape());
      const LeafSpecs& specs = strategy.operands[static_cast<size_t>(k)];
      ASSERT_EQ(specs.size(), operand.size()) << strategy.name;
      for (size_t i = 0; i < operand.size(); ++i) {
        EXPECT_TRUE(CheckSpec(specs[i], mesh_shape, operand[i]->dims()).ok())
            << strategy.name << " operand " << k;
      }
    }
  }
}

// A spec from dims' axes and partial axes: Spec({{0}, {}}, {1}) is [S0,R] P1.
inline ShardingSpec Spec(std::vector<std::vector<int64_t>> dim_axes,
                         std::vector<int64_t> partial = {}) {
  return ShardingSpec{std::move(dim_axes), std::move(partial)};
}

}  // namespace alpa::sharding::testing

#endif  // ALPA_TESTS_SHARDING_FOLLOW_TEST_UTIL_H_
