#include "sharding/strategy_graph.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/sharding/strategy_test_util.h"

namespace alpa::sharding {
namespace {

using testing::ParseVerified;

LeafSpecs Replicated(const ir::Shape& shape) {
  LeafSpecs specs;
  if (!shape.IsTuple()) return {ShardingSpec::Replicated(static_cast<int64_t>(shape.rank()))};
  for (const ir::Shape& element : shape.tuple_shapes()) {
    for (const ShardingSpec& spec : Replicated(element)) specs.push_back(spec);
  }
  return specs;
}

// A generator giving each instruction `count[name]` (default 2) replicated strategies, and
// recording how many strategies it saw for each operand through strategies_of.
struct FakeGenerator {
  std::map<std::string, int> count;
  std::map<std::string, std::vector<size_t>> seen_operand_sizes;
  std::map<std::string, int64_t> user_counts;

  Result<StrategySet> operator()(const ir::Instruction& instruction,
                                 const StrategyContext& context) {
    user_counts[instruction.name()] = context.user_count(instruction);
    for (const ir::Instruction* operand : instruction.operands()) {
      seen_operand_sizes[instruction.name()].push_back(
          context.strategies_of(*operand).strategies.size());
    }
    StrategySet set;
    const int n = count.count(instruction.name()) ? count[instruction.name()] : 2;
    for (int k = 0; k < n; ++k) {
      Strategy strategy;
      strategy.name = instruction.name() + "#" + std::to_string(k);
      strategy.output = Replicated(instruction.shape());
      for (const ir::Instruction* operand : instruction.operands()) {
        strategy.operands.push_back(Replicated(operand->shape()));
      }
      set.strategies.push_back(strategy);
    }
    return set;
  }
};

// A sum read by several users may be reduced once in its op (strategy_util.h's
// HasSeveralUsers); the count looks through single transposes and the like, which pass a
// partial sum on.
TEST(StrategyGraphTest, UserCountsLookThroughSingleTransposes) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[4,8] parameter(0)
  t = f32[8,4] transpose(p), dimensions={1,0}
  a = f32[8,4] negate(t)
  b = f32[8,4] multiply(t, t)
  ROOT r = (f32[8,4], f32[8,4]) tuple(a, b)
})");
  ASSERT_NE(module, nullptr);
  FakeGenerator fake;
  StrategyGraph graph;
  StrategyContext context;
  ASSERT_TRUE(GenerateStrategies(*module->entry(), context, std::ref(fake), graph).ok());
  EXPECT_EQ(fake.user_counts["p"], 2);  // its one reader is a transpose: t's readers count
  EXPECT_EQ(fake.user_counts["t"], 2);  // a and b (b reads it twice: one reader)
  EXPECT_EQ(fake.user_counts["a"], 1);  // the root tuple
}

TEST(StrategyGraphTest, TuplesAreViewsAndResolveToTheirProducers) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[4,8] parameter(0)
  q = f32[4,8] parameter(1)
  t = (f32[4,8], f32[4,8]) tuple(p, q)
  g = f32[4,8] get-tuple-element(t), index=1
  n = f32[4,8] negate(g)
  ROOT r = (f32[4,8], f32[4,8]) tuple(n, p)
})");
  ASSERT_NE(module, nullptr);
  FakeGenerator fake;
  fake.count["q"] = 3;
  StrategyGraph graph;
  ASSERT_TRUE(GenerateStrategies(*module->entry(), StrategyContext{}, std::ref(fake), graph).ok());

  ASSERT_EQ(graph.nodes.size(), 3u);  // p, q, n: the tuples and the gte of a tuple are views
  EXPECT_EQ(graph.nodes[0].instruction->name(), "p");
  EXPECT_EQ(graph.nodes[1].instruction->name(), "q");
  EXPECT_EQ(graph.nodes[2].instruction->name(), "n");
  const ir::Instruction* root = module->entry()->root();
  EXPECT_EQ(graph.SourceOf(*root, 0), (ValueSource{2, 0}));
  EXPECT_EQ(graph.SourceOf(*root, 1), (ValueSource{0, 0}));
  // negate saw q's three strategies through the view.
  EXPECT_EQ(fake.seen_operand_sizes["n"], std::vector<size_t>{3});
}

TEST(StrategyGraphTest, GetTupleElementOfANodeFollowsItWithOneLeaf) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = (f32[4], f32[2,2]) parameter(0)
  ROOT g = f32[2,2] get-tuple-element(p), index=1
})");
  ASSERT_NE(module, nullptr);
  FakeGenerator fake;
  fake.count["p"] = 3;
  StrategyGraph graph;
  ASSERT_TRUE(GenerateStrategies(*module->entry(), StrategyContext{}, std::ref(fake), graph).ok());

  ASSERT_EQ(graph.nodes.size(), 2u);
  const StrategySet& gte = graph.nodes[1].set;
  EXPECT_EQ(gte.follows_operand, 0);
  ASSERT_EQ(gte.strategies.size(), 3u);
  for (const Strategy& strategy : gte.strategies) {
    ASSERT_EQ(strategy.output.size(), 1u);
    EXPECT_EQ(strategy.output[0].rank(), 2);  // the f32[2,2] leaf
    ASSERT_EQ(strategy.operands.size(), 1u);
    EXPECT_EQ(strategy.operands[0].size(), 2u);  // needs the whole tuple as produced
  }
}

TEST(StrategyGraphTest, GeneratorErrorsNameTheInstructionAndItsLine) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
})");
  ASSERT_NE(module, nullptr);
  FakeGenerator fake;
  StrategyGraph graph;
  Status status = GenerateStrategies(
      *module->entry(), StrategyContext{},
      [&fake](const ir::Instruction& instruction,
              const StrategyContext& context) -> Result<StrategySet> {
        if (instruction.name() == "n") return Unimplemented("no rules for negate");
        return fake(instruction, context);
      },
      graph);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("n (line 5, column"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("no rules for negate"), std::string::npos);
}

}  // namespace
}  // namespace alpa::sharding
