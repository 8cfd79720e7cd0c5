// Shared helpers of the strategy generator tests: a strategy context on a logical mesh of one
// p3.16xlarge host (8 V100s), modules from HLO text, and the invariants every strategy set keeps.
#ifndef ALPA_TESTS_SHARDING_STRATEGY_TEST_UTIL_H_
#define ALPA_TESTS_SHARDING_STRATEGY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/presets.h"
#include "hlo/parser.h"
#include "ir/module.h"
#include "ir/verifier.h"
#include "sharding/resharding.h"
#include "sharding/strategy.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding::testing {

// Round figures: 1 TFLOP/s in f32, 100 GB/s, efficiencies 1.
inline cost::DeviceThroughput TestDevice() { return {{{ir::DType::kF32, 1e12}}, 1e11}; }

// A context on the first prod(mesh_shape) devices of a p3.16xlarge host; the operands' strategy
// sets come from `sets` (filled by the test).
class MeshEnv {
 public:
  explicit MeshEnv(std::vector<int64_t> mesh_shape, StrategyOptions options = {})
      : cluster_(*cluster::MakePresetCluster("p3.16xlarge", 1, std::nullopt)) {
    std::vector<int64_t> devices(static_cast<size_t>(
        std::accumulate(mesh_shape.begin(), mesh_shape.end(), int64_t{1}, std::multiplies<>())));
    std::iota(devices.begin(), devices.end(), 0);
    mesh_ = *cluster::MakeLogicalMesh(cluster_, *cluster::MakePhysicalMesh(cluster_, devices),
                                      mesh_shape);
    pricer_.emplace(*ReshardCostModel::Create(cluster_, mesh_));
    ctx_.cluster = &cluster_;
    ctx_.mesh = &mesh_;
    ctx_.device = TestDevice();
    ctx_.efficiency = {.matmul = 1, .other_compute = 1, .memory = 1};
    ctx_.pricer = &*pricer_;
    ctx_.options = options;
    ctx_.strategies_of = [this](const ir::Instruction& instruction) -> const StrategySet& {
      auto it = sets.find(&instruction);
      EXPECT_NE(it, sets.end()) << "no strategies for %" << instruction.name();
      return it->second;
    };
  }
  MeshEnv(const MeshEnv&) = delete;
  MeshEnv& operator=(const MeshEnv&) = delete;

  const StrategyContext& ctx() const { return ctx_; }
  const ReshardCostModel& pricer() const { return *pricer_; }
  const std::vector<int64_t>& mesh_shape() const { return mesh_.shape; }

  std::map<const ir::Instruction*, StrategySet> sets;

 private:
  cluster::ClusterSpec cluster_;
  cluster::LogicalMesh mesh_;
  std::optional<ReshardCostModel> pricer_;
  StrategyContext ctx_;
};

// Parses and verifies, or records a test failure and returns nullptr.
inline std::unique_ptr<ir::Module> ParseVerified(std::string_view text) {
  auto module = hlo::ParseHloModule(text, "test.hlo");
  if (!module.ok()) {
    ADD_FAILURE() << module.status().message();
    return nullptr;
  }
  if (Status status = ir::VerifyModule(**module); !status.ok()) {
    ADD_FAILURE() << status.message();
    return nullptr;
  }
  return std::move(module).value();
}

// The instruction named `name` of the entry computation.
inline const ir::Instruction& Named(const ir::Module& module, std::string_view name) {
  const ir::Instruction* instruction = module.entry()->GetInstruction(name);
  EXPECT_NE(instruction, nullptr) << "no instruction " << name;
  return *instruction;
}

// A generator given an instruction of an opcode it does not handle (an add) answers
// Unimplemented, naming the instruction and its opcode.
template <typename Generator>
void ExpectAnAddIsUnimplemented(const Generator& generator) {
  MeshEnv env({4});
  auto module = ParseVerified(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT s = f32[4] add(a, a)
})");
  ASSERT_NE(module, nullptr);
  Result<StrategySet> set = generator(Named(*module, "s"), env.ctx());
  EXPECT_EQ(set.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(set.status().message().find("%s (add)"), std::string::npos) << set.status().message();
}

// Every spec passes CheckSpec against its leaf; one spec per result leaf and per operand leaf;
// names unique.
inline void ExpectWellFormed(const StrategySet& set, const ir::Instruction& instruction,
                             const std::vector<int64_t>& mesh_shape) {
  auto check = [&](const LeafSpecs& specs, const ir::Shape& shape, const std::string& where) {
    const std::vector<const ir::Shape*> leaves = ShapeLeaves(shape);
    ASSERT_EQ(specs.size(), leaves.size()) << where;
    for (size_t i = 0; i < leaves.size(); ++i) {
      Status status = CheckSpec(specs[i], mesh_shape, leaves[i]->dims());
      EXPECT_TRUE(status.ok()) << where << ": " << status.message();
    }
  };
  std::set<std::string> names;
  for (const Strategy& s : set.strategies) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate name " << s.name;
    check(s.output, instruction.shape(), s.name + " output");
    ASSERT_EQ(s.operands.size(), static_cast<size_t>(instruction.operand_count())) << s.name;
    for (int64_t o = 0; o < instruction.operand_count(); ++o) {
      check(s.operands[static_cast<size_t>(o)], instruction.operand(o)->shape(),
            s.name + " operand " + std::to_string(o));
    }
  }
}

inline const Strategy* FindStrategy(const StrategySet& set, std::string_view name) {
  for (const Strategy& s : set.strategies) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace alpa::sharding::testing

#endif  // ALPA_TESTS_SHARDING_STRATEGY_TEST_UTIL_H_
