#include "sharding/dot_strategies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/sharding/strategy_test_util.h"

namespace alpa::sharding {
namespace {

using cost::CollectiveKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kB = 64, kI = 1024, kJ = 4096;

// x[B,I] . w[I,J], f32.
constexpr std::string_view kMatMul = R"(HloModule m
ENTRY e {
  x = f32[64,1024] parameter(0)
  w = f32[1024,4096] parameter(1)
  ROOT d = f32[64,4096] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// a[B,I,K] . b[B,K,J] -> [B,I,J].
constexpr std::string_view kBatchMatMul = R"(HloModule m
ENTRY e {
  a = f32[32,64,128] parameter(0)
  b = f32[32,128,256] parameter(1)
  ROOT d = f32[32,64,256] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},
      lhs_contracting_dims={2}, rhs_contracting_dims={1}
})";

struct Generated {
  std::unique_ptr<ir::Module> module;
  StrategySet set;
  double full_seconds = 0;
};

Generated Generate(std::string_view text, const testing::MeshEnv& env) {
  Generated g;
  g.module = testing::ParseVerified(text);
  if (g.module == nullptr) return g;
  const ir::Instruction& dot = testing::Named(*g.module, "d");
  Result<StrategySet> set = DotStrategies(dot, env.ctx());
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  if (set.ok()) g.set = *set;
  g.full_seconds = *InstructionSeconds(dot, env.ctx());
  testing::ExpectWellFormed(g.set, dot, env.mesh_shape());
  return g;
}

int64_t CountPartial(const StrategySet& set) {
  return std::count_if(set.strategies.begin(), set.strategies.end(),
                       [](const Strategy& s) { return !s.output[0].partial_axes.empty(); });
}

TEST(DotStrategiesTest, MegatronColumnAndRowSplitsOnA2x4Mesh) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate(kMatMul, env);
  ASSERT_NE(g.module, nullptr);

  // Column split of w over axis 1, batch over axis 0: no communication.
  const Strategy* column = testing::FindStrategy(g.set, "SS = SR x RS @ {0,1}");
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(ToString(column->output[0]), "[S0,S1]");
  EXPECT_EQ(ToString(column->operands[0][0]), "[S0,R]");
  EXPECT_EQ(ToString(column->operands[1][0]), "[R,S1]");
  EXPECT_THAT(column->collectives, IsEmpty());
  EXPECT_EQ(column->communication_seconds, 0);
  EXPECT_EQ(column->memory_bytes, kB / 2 * kJ / 4 * 4);

  // Row split of w over axis 1: each device sums a quarter of I; the [B/2, J] output tile is
  // all-reduced over axis 1: 32 * 4096 * 4 bytes.
  const Strategy* row = testing::FindStrategy(g.set, "SR = SS x SR @ {0,1} (allreduce @ 1)");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(ToString(row->output[0]), "[S0,R]");
  EXPECT_EQ(ToString(row->operands[0][0]), "[S0,S1]");
  EXPECT_EQ(ToString(row->operands[1][0]), "[S1,R]");
  EXPECT_THAT(row->collectives,
              ElementsAre(StrategyCollective{CollectiveKind::kAllReduce, {1}, kB / 2 * kJ * 4}));
  EXPECT_DOUBLE_EQ(row->communication_seconds,
                   env.pricer().StepSeconds({CollectiveKind::kAllReduce, {1}, kB / 2 * kJ * 4}));
  EXPECT_GT(row->communication_seconds, 0);

  // Its partial twin runs nothing and leaves the sum to the edge.
  const Strategy* partial = testing::FindStrategy(g.set, "SR = SS x SR @ {0,1} (partial @ 1)");
  ASSERT_NE(partial, nullptr);
  EXPECT_EQ(ToString(partial->output[0]), "[S0,R] P1");
  EXPECT_THAT(partial->collectives, IsEmpty());
  EXPECT_DOUBLE_EQ(partial->compute_seconds, row->compute_seconds);

  // Alpa's other names, with axes listed b, i, j, k; the replicated strategy comes last.
  EXPECT_NE(testing::FindStrategy(g.set, "SS = SR x RS @ {1,0}"), nullptr);
  const Strategy* rs = testing::FindStrategy(g.set, "RS = RS x SS @ {1,0} (allreduce @ 0)");
  ASSERT_NE(rs, nullptr);
  EXPECT_THAT(rs->collectives,
              ElementsAre(StrategyCollective{CollectiveKind::kAllReduce, {0}, kB * kJ / 4 * 4}));
  EXPECT_NE(testing::FindStrategy(g.set, "SR = SR x RR @ {01}"), nullptr);
  EXPECT_NE(testing::FindStrategy(g.set, "RR = RS x SR @ {01} (allreduce @ {0,1})"), nullptr);
  EXPECT_EQ(g.set.strategies.back().name, "RR = RR x RR");
  EXPECT_EQ(g.set.follows_operand, -1);
  EXPECT_EQ(g.set.strategies.size(), 25u);  // 1 + N^R + (2+D)K((N+1)^R - N^R), N=D=2, K=1, R=2
}

TEST(DotStrategiesTest, DataParallelOnA1DMeshCommunicatesNothing) {
  testing::MeshEnv env({4});
  Generated g = Generate(kMatMul, env);
  ASSERT_NE(g.module, nullptr);
  const Strategy* data = testing::FindStrategy(g.set, "SR = SR x RR @ {0}");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(ToString(data->output[0]), "[S0,R]");
  EXPECT_EQ(ToString(data->operands[0][0]), "[S0,R]");
  EXPECT_EQ(ToString(data->operands[1][0]), "[R,R]");
  EXPECT_THAT(data->collectives, IsEmpty());
  EXPECT_EQ(data->communication_seconds, 0);
  EXPECT_DOUBLE_EQ(data->compute_seconds, g.full_seconds / 4);
  // The contracting split all-reduces the whole output: 64 * 4096 * 4 bytes.
  const Strategy* k = testing::FindStrategy(g.set, "RR = RS x SR @ {0} (allreduce @ 0)");
  ASSERT_NE(k, nullptr);
  EXPECT_THAT(k->collectives,
              ElementsAre(StrategyCollective{CollectiveKind::kAllReduce, {0}, kB * kJ * 4}));
}

// compute = full / (product of the mapped axes), the axes every operand split names.
TEST(DotStrategiesTest, ComputeIsTheFullInstructionOverItsParallelism) {
  testing::MeshEnv env({2, 2, 2});
  Generated g = Generate(kBatchMatMul, env);
  ASSERT_NE(g.module, nullptr);
  EXPECT_GT(g.full_seconds, 0);
  for (const Strategy& s : g.set.strategies) {
    std::set<int64_t> axes;
    for (const LeafSpecs& operand : s.operands) {
      for (const auto& dim : operand[0].dim_axes) axes.insert(dim.begin(), dim.end());
    }
    double parallelism = 1;
    for (int64_t axis : axes) parallelism *= static_cast<double>(env.mesh_shape()[axis]);
    EXPECT_DOUBLE_EQ(s.compute_seconds * parallelism, g.full_seconds) << s.name;
  }
  const Strategy& replicated = g.set.strategies.back();
  EXPECT_EQ(replicated.name, "RRR = RRR x RRR");
  EXPECT_DOUBLE_EQ(replicated.compute_seconds, g.full_seconds);
  EXPECT_EQ(replicated.memory_bytes, 32 * 64 * 256 * 4);
}

TEST(DotStrategiesTest, PartialAndReduceScatterVariantsExistIffAllowed) {
  for (bool allowed : {true, false}) {
    testing::MeshEnv env({2, 4}, {.allow_partial_outputs = allowed});
    Generated g = Generate(kMatMul, env);
    ASSERT_NE(g.module, nullptr);
    int64_t all_reduces = 0;
    for (const Strategy& s : g.set.strategies) {
      if (s.collectives.empty() || s.collectives[0].kind != CollectiveKind::kAllReduce) continue;
      ++all_reduces;
      // Every all-reducing strategy has a partial twin (same prefix) and a reduce-scatter onto
      // each output dimension exactly when allowed.
      const std::string prefix = s.name.substr(0, s.name.find(" (allreduce"));
      const std::string cut = AxesString(s.collectives[0].axes);
      EXPECT_EQ(testing::FindStrategy(g.set, prefix + " (partial @ " + cut + ")") != nullptr,
                allowed);
      for (int64_t d : {0, 1}) {
        const std::string scatter =
            prefix + " (reducescatter @ " + cut + " to dim " + std::to_string(d) + ")";
        const Strategy* variant = testing::FindStrategy(g.set, scatter);
        ASSERT_EQ(variant != nullptr, allowed) << scatter;
        if (variant == nullptr) continue;
        // One reduce-scatter of the tile the all-reduce would sum, leaving 1/|cut| of it.
        EXPECT_THAT(variant->collectives,
                    ElementsAre(StrategyCollective{CollectiveKind::kReduceScatter,
                                                   s.collectives[0].axes, s.collectives[0].bytes}));
        EXPECT_EQ(variant->memory_bytes * AxesSize(env.mesh_shape(), s.collectives[0].axes),
                  s.memory_bytes);
      }
    }
    EXPECT_EQ(all_reduces, 5);
    EXPECT_EQ(CountPartial(g.set), allowed ? 5 : 0);
  }
}

TEST(DotStrategiesTest, StrategyCountsOnA2x2x2MeshAreBounded) {
  // 1 + N^R + (2+D)K((N+1)^R - N^R) with R = 3: matmul N = D = 2 -> 85, batched N = D = 3 ->
  // 213; without partial outputs 1 + N^R + K((N+1)^R - N^R): 28 and 65.
  for (bool allowed : {true, false}) {
    testing::MeshEnv env({2, 2, 2}, {.allow_partial_outputs = allowed});
    Generated matmul = Generate(kMatMul, env);
    Generated batched = Generate(kBatchMatMul, env);
    ASSERT_NE(matmul.module, nullptr);
    ASSERT_NE(batched.module, nullptr);
    EXPECT_EQ(matmul.set.strategies.size(), allowed ? 85u : 28u);
    EXPECT_EQ(batched.set.strategies.size(), allowed ? 213u : 65u);
  }
}

TEST(DotStrategiesTest, BatchedNamesCarryTheClass) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate(kBatchMatMul, env);
  ASSERT_NE(g.module, nullptr);
  const Strategy* s = testing::FindStrategy(g.set, "SbSiR = SbSiR x SbRR @ {0,1}");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ToString(s->output[0]), "[S0,S1,R]");
  EXPECT_EQ(ToString(s->operands[1][0]), "[S0,R,R]");
  EXPECT_EQ(g.set.strategies.back().name, "RRR = RRR x RRR");
}

TEST(DotStrategiesTest, SmallDimensionsLeaveAxesUnused) {
  // [2,3] . [3,5] on (2,4): only the 2 rows can take an axis (axis 0); axis 1 fits nowhere.
  testing::MeshEnv env({2, 4});
  Generated g = Generate(R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  w = f32[3,5] parameter(1)
  ROOT d = f32[2,5] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                         env);
  ASSERT_NE(g.module, nullptr);
  ASSERT_EQ(g.set.strategies.size(), 2u);
  EXPECT_EQ(g.set.strategies[0].name, "SR = SR x RR @ {0}");
  EXPECT_DOUBLE_EQ(g.set.strategies[0].compute_seconds, g.full_seconds / 2);
}

TEST(DotStrategiesTest, OtherOpcodesAreUnimplemented) {
  testing::ExpectAnAddIsUnimplemented(DotStrategies);
}

}  // namespace
}  // namespace alpa::sharding
