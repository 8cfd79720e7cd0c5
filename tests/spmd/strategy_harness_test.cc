// The strategy harness, in the manner of ggml's test-backend-ops: for one instruction of every op
// family, every strategy the generator offers for it (sharding/strategy_dispatch.h) is pinned in
// turn on meshes (4) and (2,2), planned around it, partitioned (spmd/partitioner.h) and run on 4
// in-process devices (runtime/spmd_executor.h), and the assembled result is held to the
// reference interpreter's on the unsplit module. A strategy that the partitioner cannot lower,
// or that computes something else, fails here: a plan must never price what cannot run.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/presets.h"
#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "sharding/auto_sharding.h"
#include "spmd/partitioner.h"
#include "tests/sharding/train_step_plans.h"
#include "tests/spmd/run_on_devices.h"

namespace alpa::spmd {
namespace {

// One op family's case: a module whose root is the instruction `op`.
struct OpCase {
  std::string name;
  std::string body;  // the entry's instructions, the last `ROOT op = ...`
  std::string callees = "";
};

const char kAdd[] = R"(add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";
const char kMax[] = R"(max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
)";
const char kLess[] = R"(less {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
)";
const char kLoop[] = R"(cond {
  s = (s32[], f32[8,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[8,16] multiply(x, x)
  ROOT t = (s32[], f32[8,16]) tuple(j, y)
}
)";

const char kGe[] = R"(ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
}
)";
const char kSquare[] = R"(square {
  x = f32[8,16] parameter(0)
  ROOT y = f32[8,16] multiply(x, x)
}
negate {
  x = f32[8,16] parameter(0)
  ROOT y = f32[8,16] negate(x)
}
)";

std::vector<OpCase> Cases() {
  return {
      {"dot", R"(a = f32[8,16] parameter(0)
  b = f32[16,12] parameter(1)
  ROOT op = f32[8,12] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"},
      {"batched_dot", R"(a = f32[4,8,16] parameter(0)
  b = f32[4,16,8] parameter(1)
  ROOT op = f32[4,8,8] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2},
      rhs_batch_dims={0}, rhs_contracting_dims={1})"},
      {"add", R"(a = f32[8,16] parameter(0)
  b = f32[8,16] parameter(1)
  ROOT op = f32[8,16] add(a, b))"},
      {"exp", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[8,16] exponential(a))"},
      {"select", R"(p = pred[8,16] parameter(0)
  a = f32[8,16] parameter(1)
  b = f32[8,16] parameter(2)
  ROOT op = f32[8,16] select(p, a, b))"},
      {"convert", R"(a = f32[8,16] parameter(0)
  ROOT op = s32[8,16] convert(a))"},
      {"reduce_sum", R"(a = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  ROOT op = f32[8] reduce(a, zero), dimensions={1}, to_apply=add)",
       kAdd},
      // An init value that is not the reducer's identity is applied once, not once per tile.
      {"reduce_sum_init", R"(a = f32[8,16] parameter(0)
  init = f32[] constant(1.5)
  ROOT op = f32[8] reduce(a, init), dimensions={1}, to_apply=add)",
       kAdd},
      {"reduce_sum_all", R"(a = f32[8,16] parameter(0)
  init = f32[] parameter(1)
  ROOT op = f32[] reduce(a, init), dimensions={0,1}, to_apply=add)",
       kAdd},
      {"reduce_max_init", R"(a = f32[8,16] parameter(0)
  init = f32[] constant(0.25)
  ROOT op = f32[16] reduce(a, init), dimensions={0}, to_apply=max)",
       kMax},
      {"broadcast", R"(a = f32[16] parameter(0)
  ROOT op = f32[8,16] broadcast(a), dimensions={1})"},
      {"transpose", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[16,8] transpose(a), dimensions={1,0})"},
      {"reshape", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[8,4,4] reshape(a))"},
      {"reverse", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[8,16] reverse(a), dimensions={1})"},
      {"slice", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[8,8] slice(a), slice={[0:8], [4:12]})"},
      {"pad", R"(a = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  ROOT op = f32[8,20] pad(a, zero), padding=0_0x2_2)"},
      {"concatenate", R"(a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  ROOT op = f32[8,16] concatenate(a, b), dimensions={1})"},
      {"dynamic_slice", R"(a = f32[8,16] parameter(0)
  i = s32[] constant(0)
  j = s32[] constant(4)
  ROOT op = f32[8,8] dynamic-slice(a, i, j), dynamic_slice_sizes={8,8})"},
      {"dynamic_update_slice", R"(a = f32[8,16] parameter(0)
  u = f32[8,4] parameter(1)
  i = s32[] constant(0)
  j = s32[] constant(8)
  ROOT op = f32[8,16] dynamic-update-slice(a, u, i, j))"},
      {"gather", R"(table = f32[16,8] parameter(0)
  ids = s32[4,1] constant({{3}, {0}, {15}, {7}})
  ROOT op = f32[4,8] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,8})"},
      {"scatter", R"(table = f32[16,8] parameter(0)
  ids = s32[4,1] constant({{3}, {0}, {15}, {7}})
  updates = f32[4,8] parameter(1)
  ROOT op = f32[16,8] scatter(table, ids, updates), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
      to_apply=add)",
       kAdd},
      {"convolution", R"(x = f32[4,8,8,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  ROOT op = f32[4,8,8,8] convolution(x, k), window={size=3x3 pad=1_1x1_1},
      dim_labels=b01f_01io->b01f)"},
      {"reduce_window", R"(x = f32[4,8,8,4] parameter(0)
  init = f32[] constant(-inf)
  ROOT op = f32[4,4,4,4] reduce-window(x, init), window={size=1x2x2x1 stride=1x2x2x1},
      to_apply=max)",
       kMax},
      {"select_and_scatter", R"(x = f32[4,8,8,4] parameter(0)
  g = f32[4,4,4,4] parameter(1)
  zero = f32[] constant(0)
  ROOT op = f32[4,8,8,4] select-and-scatter(x, g, zero), window={size=1x2x2x1 stride=1x2x2x1},
      select=ge, scatter=add)",
       std::string(kGe) + kAdd},
      {"call", R"(x = f32[8,16] parameter(0)
  ROOT op = f32[8,16] call(x), to_apply=square)",
       kSquare},
      {"conditional", R"(p = pred[] parameter(0)
  x = f32[8,16] parameter(1)
  ROOT op = f32[8,16] conditional(p, x, x), true_computation=square,
      false_computation=negate)",
       kSquare},
      {"sort", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[8,16] sort(a), dimensions={1}, to_apply=less)",
       kLess},
      {"batch_norm_training", R"(x = f32[2,8,4] parameter(0)
  scale = f32[8] parameter(1)
  offset = f32[8] parameter(2)
  ROOT op = (f32[2,8,4], f32[8], f32[8]) batch-norm-training(x, scale, offset), epsilon=0.001,
      feature_index=1)"},
      {"batch_norm_inference", R"(x = f32[2,8,4] parameter(0)
  scale = f32[8] parameter(1)
  offset = f32[8] parameter(2)
  mean = f32[8] parameter(3)
  v = f32[8] parameter(4)
  variance = f32[8] multiply(v, v)
  ROOT op = f32[2,8,4] batch-norm-inference(x, scale, offset, mean, variance), epsilon=0.001,
      feature_index=1)"},
      {"batch_norm_grad", R"(x = f32[2,8,4] parameter(0)
  scale = f32[8] parameter(1)
  mean = f32[8] parameter(2)
  v = f32[8] parameter(3)
  variance = f32[8] multiply(v, v)
  grad = f32[2,8,4] parameter(4)
  ROOT op = (f32[2,8,4], f32[8], f32[8]) batch-norm-grad(x, scale, mean, variance, grad),
      epsilon=0.001, feature_index=1)"},
      {"elementwise_custom_call", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[8,16] custom-call(a), custom_call_target="AwsNeuronGelu")"},
      {"identity_custom_call", R"(a = f32[8,16] parameter(0)
  ROOT op = f32[8,16] custom-call(a), custom_call_target="AwsNeuronTransferWithStaticRing")"},
      {"iota", R"(ROOT op = s32[8,16] iota(), iota_dimension=1)"},
      {"rng", R"(lo = f32[] constant(0)
  hi = f32[] constant(1)
  ROOT op = f32[8,16] rng(lo, hi), distribution=rng_uniform)"},
      {"while", R"(x = f32[8,16] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[8,16]) tuple(zero, x)
  ROOT op = (s32[], f32[8,16]) while(s), condition=cond, body=body)",
       kLoop},
  };
}

struct HarnessRun {
  int64_t strategies = 0;
  std::vector<std::string> failures;  // "case mesh strategy: why"
};

// What differs between `got` (the root's leaves) and `want` (the reference's root), or "".
std::string Difference(const std::vector<ir::Literal>& got, const ir::Literal& want) {
  std::vector<const ir::Literal*> leaves;
  if (want.shape().IsTuple()) {
    for (const ir::Literal& element : want.tuple_elements()) leaves.push_back(&element);
  } else {
    leaves.push_back(&want);
  }
  if (got.size() != leaves.size()) return "a different number of results";
  for (size_t leaf = 0; leaf < got.size(); ++leaf) {
    for (int64_t i = 0; i < leaves[leaf]->element_count(); ++i) {
      const double a = got[leaf].GetDouble(i), b = leaves[leaf]->GetDouble(i);
      if (std::abs(a - b) > 1e-4 * std::max(1.0, std::abs(b))) {
        return "result " + std::to_string(leaf) + " element " + std::to_string(i) + ": " +
               std::to_string(a) + " where the reference has " + std::to_string(b);
      }
    }
  }
  return "";
}

void RunCase(const OpCase& op_case, const std::vector<int64_t>& mesh, HarnessRun& run) {
  const std::string text = "HloModule " + op_case.name + "\n" + op_case.callees +
                           "ENTRY main {\n  " + op_case.body + "\n}\n";
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(text, op_case.name);
  ASSERT_TRUE(module.ok()) << op_case.name << ": " << module.status().message();
  const ir::Computation& entry = *(*module)->entry();
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("local:4");
  ASSERT_TRUE(cluster.ok());
  const cluster::LogicalMesh logical = sharding::testing::WholeMesh(*cluster, mesh);
  Result<sharding::ShardingSolution> free = sharding::AutoShard(entry, *cluster, logical, {});
  ASSERT_TRUE(free.ok()) << op_case.name << ": " << free.status().message();
  const std::vector<ir::Literal> arguments = interp::RandomArguments(entry, 7);
  Result<ir::Literal> want = interp::EvaluateModule(**module, arguments);
  ASSERT_TRUE(want.ok()) << op_case.name << ": " << want.status().message();
  const sharding::StrategySet& offered =
      free->graph.nodes[static_cast<size_t>(free->graph.NodeOf(*entry.root()))].set;
  std::set<std::string> tried;
  for (const sharding::Strategy& strategy : offered.strategies) {
    if (!tried.insert(strategy.name).second) continue;
    ++run.strategies;
    const std::string what = op_case.name + " on mesh (" + std::to_string(mesh[0]) +
                             (mesh.size() > 1 ? "," + std::to_string(mesh[1]) : "") +
                             "), strategy " + strategy.name + ": ";
    sharding::AutoShardingOptions options;
    options.pinned_strategies = {{"op", strategy.name}};
    Result<sharding::ShardingSolution> pinned =
        sharding::AutoShard(entry, *cluster, logical, options);
    if (!pinned.ok()) {
      run.failures.push_back(what + "does not plan: " + pinned.status().message());
      continue;
    }
    Result<std::unique_ptr<ir::Module>> program = PartitionComputation(entry, *pinned, mesh);
    if (!program.ok()) {
      run.failures.push_back(what + "does not partition: " + program.status().message());
      continue;
    }
    Result<std::vector<ir::Literal>> got =
        RunOnFourDevices(**program, entry, *pinned, arguments, mesh,
                         pinned->Chosen(pinned->graph.NodeOf(*entry.root())).output);
    if (!got.ok()) {
      run.failures.push_back(what + "does not run: " + got.status().message());
      continue;
    }
    const std::string difference = Difference(*got, *want);
    if (!difference.empty()) run.failures.push_back(what + difference);
  }
}

TEST(StrategyHarnessTest, EveryOfferedStrategyRunsAsTheReference) {
  HarnessRun run;
  for (const OpCase& op_case : Cases()) {
    for (const std::vector<int64_t>& mesh : {std::vector<int64_t>{4}, {2, 2}}) {
      RunCase(op_case, mesh, run);
    }
  }
  ::testing::Test::RecordProperty("strategies", std::to_string(run.strategies));
  EXPECT_GT(run.strategies, 100);
  std::string report;
  for (const std::string& failure : run.failures) report += "  " + failure + "\n";
  EXPECT_TRUE(run.failures.empty())
      << run.failures.size() << " of " << run.strategies << " strategies fail:\n"
      << report;
}

// The name of the strategy `name`'s generator offers whose result is laid out by `spec`.
std::string StrategyWithOutput(const sharding::ShardingSolution& solution,
                               const ir::Computation& entry, const std::string& name,
                               const sharding::ShardingSpec& spec) {
  const sharding::StrategySet& offered =
      solution.graph.nodes[static_cast<size_t>(solution.graph.NodeOf(*entry.GetInstruction(name)))]
          .set;
  for (const sharding::Strategy& strategy : offered.strategies) {
    if (strategy.output[0] == spec) return strategy.name;
  }
  return "";
}

// A replicated broadcast read split by a loop op is broadcast again from its operand into the
// reader's tile: no tile is cut out of a whole broadcast written to memory (which the runtime
// would materialise, 4 times the tile here), and the plan counts no copy of it.
TEST(StrategyHarnessTest, ABroadcastReadSplitIsBroadcastAgainIntoTheTile) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(R"(HloModule rebroadcast
ENTRY main {
  p = f32[64] parameter(0)
  x = f32[16,64] parameter(1)
  b = f32[16,64] broadcast(p), dimensions={1}
  ROOT op = f32[16,64] multiply(x, b)
})",
                                                                   "rebroadcast");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const ir::Computation& entry = *(*module)->entry();
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("local:4");
  ASSERT_TRUE(cluster.ok());
  const std::vector<int64_t> mesh = {4};
  const cluster::LogicalMesh logical = sharding::testing::WholeMesh(*cluster, mesh);
  Result<sharding::ShardingSolution> free = sharding::AutoShard(entry, *cluster, logical, {});
  ASSERT_TRUE(free.ok()) << free.status().message();
  sharding::AutoShardingOptions options;
  options.pinned_strategies = {
      {"b", StrategyWithOutput(*free, entry, "b", sharding::ShardingSpec::Replicated(2))},
      {"op", StrategyWithOutput(*free, entry, "op", sharding::ShardingSpec::SplitDim(2, 0, {0}))}};
  ASSERT_FALSE(options.pinned_strategies["b"].empty());
  ASSERT_FALSE(options.pinned_strategies["op"].empty());
  Result<sharding::ShardingSolution> pinned =
      sharding::AutoShard(entry, *cluster, logical, options);
  ASSERT_TRUE(pinned.ok()) << pinned.status().message();
  EXPECT_FALSE(pinned->lowering.contains(entry.GetInstruction("op")));

  Result<std::unique_ptr<ir::Module>> program = PartitionComputation(entry, *pinned, mesh);
  ASSERT_TRUE(program.ok()) << program.status().message();
  const ir::Instruction* product = (*program)->entry()->GetInstruction("op");
  ASSERT_NE(product, nullptr);
  const ir::Instruction* tile = product->operand(1);
  EXPECT_EQ(tile->opcode(), ir::Opcode::kBroadcast) << ir::OpcodeName(tile->opcode());
  EXPECT_EQ(tile->shape().dims(), (std::vector<int64_t>{4, 64}));

  const std::vector<ir::Literal> arguments = interp::RandomArguments(entry, 7);
  Result<ir::Literal> want = interp::EvaluateModule(**module, arguments);
  ASSERT_TRUE(want.ok());
  Result<std::vector<ir::Literal>> got =
      RunOnFourDevices(**program, entry, *pinned, arguments, mesh,
                       pinned->Chosen(pinned->graph.NodeOf(*entry.root())).output);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(Difference(*got, *want), "");
}

}  // namespace
}  // namespace alpa::spmd
