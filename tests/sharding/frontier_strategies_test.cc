// The strategies frontier-scale users set by hand, reached by the ILP on its own (issue 37):
// expert parallelism for Mixtral's experts (each device holds whole experts and the tokens travel
// to them by all-to-all) and sequence parallelism for Llama's norms (RMSNorm split along the
// sequence between the tensor-parallel dots). Neither is a strategy of its own: sharding the
// expert dimension of the dispatch and combine dots (models/expert_routing.h), and the sequence
// dimension of elementwise ops and reductions, are ordinary strategies, and the resharding
// between them (an all-to-all, a reduce-scatter) is priced on the edges (sharding/resharding.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "models/llama.h"
#include "tests/sharding/train_step_plans.h"

namespace alpa::sharding::testing {
namespace {

TrainStep LlamaTrainStep(const models::LlamaConfig& config) {
  Result<models::Model> model = models::BuildLlama(config);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return BuildStep(*model, {});
}

// Mixtral's expert weights ([E, H, F], [E, F, H]) are split by expert over the 4 devices: each
// holds one expert whole, and the dispatched tokens reach it by all-to-all, where splitting each
// expert by its FFN columns (tensor parallelism inside the experts) would all-reduce every
// expert's output.
TEST(FrontierStrategiesTest, MixtralExpertsAreSplitByExpertWithAllToAll) {
  models::LlamaConfig config{.batch = 4,
                             .seq = 1024,
                             .hidden = 1024,
                             .layers = 1,
                             .heads = 8,
                             .kv_heads = 2,
                             .ffn = 4096,
                             .vocab = 1024,
                             .experts = 4,
                             .expert_group_size = 1024};
  Planned planned = Plan(LlamaTrainStep(config), "dgx-h100:1x4", {4});
  for (const char* weight : {"layer0.moe.gate.w", "layer0.moe.up.w", "layer0.moe.down.w"}) {
    EXPECT_EQ(ParameterSpec(planned, weight), "[S0,R,R]") << weight << Describe(planned);
  }
  EXPECT_GT(Count(planned.solution.estimate, cost::CollectiveKind::kAllToAll), 0)
      << Describe(planned);
}

// The RMSNorms of `planned`'s Llama ([batch, seq, hidden] rsqrt), and how many of them run split
// along the sequence.
struct NormSplits {
  int64_t norms = 0;
  int64_t along_sequence = 0;
  std::string specs;  // for failure messages
};
NormSplits SplitNorms(const Planned& planned) {
  NormSplits splits;
  for (const std::unique_ptr<ir::Instruction>& instruction :
       planned.module->entry()->instructions()) {
    if (instruction->opcode() != ir::Opcode::kRsqrt || instruction->shape().rank() != 3) continue;
    const ShardingSpec spec = OutputShardingSpec(planned, instruction->name());
    ++splits.norms;
    splits.along_sequence += spec.dim_axes[1].empty() ? 0 : 1;
    splits.specs += " " + instruction->name() + " " + ToString(spec);
  }
  return splits;
}

// A batch of one sequence of 4,096 tokens, which leaves no data parallelism to take.
models::LlamaConfig OneLongSequence(int64_t ffn) {
  return {.batch = 1,
          .seq = 4096,
          .hidden = 2048,
          .layers = 2,
          .heads = 16,
          .kv_heads = 4,
          .ffn = ffn,
          .vocab = 1024};
}

// At sequence 4096 on 4 H100s the blocks' RMSNorms run split along the sequence (Megatron's
// sequence parallelism), not replicated as plain tensor parallelism runs them. (At sequence 1024
// replicated norms are the faster plan, and the ILP keeps them.)
TEST(FrontierStrategiesTest, LlamaNormsAreSplitAlongALongSequence) {
  const models::LlamaConfig config = OneLongSequence(/*ffn=*/2048);
  Planned planned = Plan(LlamaTrainStep(config), "dgx-h100:1x4", {4});
  const NormSplits split = SplitNorms(planned);
  ASSERT_GT(split.norms, 0);
  EXPECT_GT(split.along_sequence * 2, split.norms) << split.specs << Describe(planned);
}

// With a larger FFN the fastest plan is Megatron's tensor parallelism with the norms replicated;
// held to 95% of that plan's memory, the ILP splits them along the sequence, each device keeping a
// quarter of the norms' activations (the memory constraint is exact, sharding/cost_graph.h: with
// a group's peak held over its whole span, the solver took this budget for one no plan meets).
TEST(FrontierStrategiesTest, LlamaNormsAreSplitAlongTheSequenceWhenMemoryIsShort) {
  const models::LlamaConfig config = OneLongSequence(/*ffn=*/8192);
  const cluster::ClusterSpec cluster = *cluster::ParseClusterArgument("dgx-h100:1x4");
  Planned fastest = Plan(LlamaTrainStep(config), cluster, {4});
  const NormSplits replicated = SplitNorms(fastest);
  ASSERT_GT(replicated.norms, 0);
  EXPECT_EQ(replicated.along_sequence, 0) << replicated.specs;

  AutoShardingOptions short_of_memory;
  short_of_memory.memory_budget_bytes = fastest.solution.estimate.peak_memory_bytes * 95 / 100;
  Planned planned = Plan(LlamaTrainStep(config), cluster, {4}, short_of_memory);
  EXPECT_LE(planned.solution.estimate.peak_memory_bytes, *short_of_memory.memory_budget_bytes);
  const NormSplits split = SplitNorms(planned);
  EXPECT_EQ(split.along_sequence, split.norms) << split.specs << Describe(planned);
}

}  // namespace
}  // namespace alpa::sharding::testing
