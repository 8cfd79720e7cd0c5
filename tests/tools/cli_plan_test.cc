// `alpa plan`: the parallel methods' layouts, the plan document's fields, determinism, -o, the
// manual pins and the bad-input contract. Tiny models and a short solver limit keep each fast.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kBase = {"plan",         "mlp-tiny", "--cluster", "p3.16xlarge:1x4",
                                        "--time-limit", "5"};

RunResult Plan(std::vector<std::string> extra) {
  std::vector<std::string> args = kBase;
  args.insert(args.end(), extra.begin(), extra.end());
  return RunAlpa(args);
}

nlohmann::json PlanJson(const std::string& method) {
  RunResult r = Plan({"--method", method, "--json"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  return ParseJson(r);
}

constexpr char kSplit0[] = "{devices=[4,1]<=[4]}";

// mlp-tiny has 6 weights (layer0, layer1 and out; w and b each); its loss is a mean over the
// batch, so a batch split all-reduces it once.
constexpr int kWeights = 6;

int Collectives(const nlohmann::json& plan, const char* kind) {
  return plan["estimate"]["comm"][kind].get<int>();
}

TEST_F(AlpaCliTest, PlanDataSplitsTheBatchAndReplicatesWeights) {
  nlohmann::json json = PlanJson("data");
  EXPECT_EQ(json["method"], "data");
  EXPECT_EQ(json["mesh"], nlohmann::json({4}));
  const nlohmann::json& shardings = json["shardings"];
  EXPECT_EQ(shardings["x"], kSplit0);
  EXPECT_EQ(shardings["y"], kSplit0);
  for (const char* name : {"layer0.w", "layer0.b", "out.w", "layer0.w.m", "layer0.w.v"}) {
    EXPECT_EQ(shardings[name], "{replicated}") << name;
  }
  EXPECT_GT(json["pins"].get<int>(), 0);
  // Textbook data parallelism: one all-reduce per gradient, nothing else.
  EXPECT_EQ(json["batch_axis"], 0);
  EXPECT_EQ(Collectives(json, "all-reduce"), kWeights + 1);
  for (const char* kind : {"all-gather", "reduce-scatter", "all-to-all", "collective-permute"}) {
    EXPECT_EQ(Collectives(json, kind), 0) << kind;
  }
}

TEST_F(AlpaCliTest, PlanZero2ShardsOptimizerState) {
  nlohmann::json json = PlanJson("zero2");
  const nlohmann::json& shardings = json["shardings"];
  EXPECT_EQ(shardings["x"], kSplit0);
  EXPECT_EQ(shardings["layer0.w"], "{replicated}");
  // layer0.w is f32[16,32]: its state splits on the larger dimension, 32.
  EXPECT_EQ(shardings["layer0.w.m"], "{devices=[1,4]<=[4]}");
  EXPECT_EQ(shardings["layer1.w.v"], "{devices=[4,1]<=[4]}");
  // ZeRO-2: each gradient reduce-scattered into its state's split (once, though the two moments
  // read it), each updated weight all-gathered; only the loss is all-reduced.
  EXPECT_EQ(Collectives(json, "reduce-scatter"), kWeights);
  EXPECT_EQ(Collectives(json, "all-gather"), kWeights);
  EXPECT_EQ(Collectives(json, "all-reduce"), 1);
}

TEST_F(AlpaCliTest, PlanZero3ShardsWeightsAndGathersThem) {
  nlohmann::json json = PlanJson("zero3");
  const nlohmann::json& shardings = json["shardings"];
  EXPECT_EQ(shardings["layer0.w"], "{devices=[1,4]<=[4]}");
  EXPECT_EQ(shardings["layer0.w.m"], "{devices=[1,4]<=[4]}");
  EXPECT_EQ(shardings["layer1.w"], "{devices=[4,1]<=[4]}");
  // ZeRO-3: weights gathered for the forward pass (and again where the backward pass reads
  // them), gradients reduce-scattered, nothing gathered after the update.
  EXPECT_GE(Collectives(json, "all-gather"), kWeights);
  EXPECT_EQ(Collectives(json, "reduce-scatter"), kWeights);
  EXPECT_EQ(Collectives(json, "all-reduce"), 1);
}

// Alpa's (dp, op) meshes: --batch-axis 0 makes axis 0 the data-parallel one, so (4, 1) splits
// the batch four ways and (1, 4) not at all.
TEST_F(AlpaCliTest, PlanBatchAxisNamesTheDataParallelAxis) {
  // A parameter's strategy is its layout: "[S0,R]" is x split on its batch dimension.
  RunResult dp = Plan({"--mesh", "4x1", "--batch-axis", "0", "--json"});
  ASSERT_EQ(dp.exit_code, 0) << Describe(dp);
  EXPECT_EQ(ParseJson(dp)["strategies"]["x"], "[S0,R]");
  RunResult op = Plan({"--mesh", "1x4", "--batch-axis", "0", "--json"});
  ASSERT_EQ(op.exit_code, 0) << Describe(op);
  const nlohmann::json op_plan = ParseJson(op);
  EXPECT_EQ(op_plan["batch_axis"], 0);
  EXPECT_EQ(op_plan["strategies"]["x"].get<std::string>().substr(0, 3), "[R,");
  ExpectBadInput(Plan({"--mesh", "2x2", "--batch-axis", "2"}), "--batch-axis 2");
}

TEST_F(AlpaCliTest, PlanDumpsTheSolverProblemForAlpaSolve) {
  const std::string path = (dir_ / "problem.json").string();
  RunResult planned = Plan({"--method", "data", "--dump-problem", path});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  RunResult solved = RunAlpa({"solve", path, "--json"});
  ASSERT_EQ(solved.exit_code, 0) << Describe(solved);
  EXPECT_TRUE(ParseJson(solved)["feasible"].get<bool>());
}

TEST_F(AlpaCliTest, PlanDocumentHasEveryFieldAndIsDeterministic) {
  const std::string path = (dir_ / "plan.json").string();
  RunResult first = Plan({"--method", "data", "--json", "-o", path});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  nlohmann::json json = ParseJson(first);
  for (const char* key :
       {"method", "mesh", "num_micro_batches", "estimate", "compile", "shardings", "pins"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  for (const char* key : {"step_time_s", "tflops", "peak_memory_bytes", "comm"}) {
    EXPECT_TRUE(json["estimate"].contains(key)) << key;
  }
  for (const char* key : {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                          "collective-permute", "send-recv", "bytes"}) {
    EXPECT_TRUE(json["estimate"]["comm"][key].is_number_integer()) << key;
  }
  for (const char* key : {"total_s", "solver_s", "solver_status", "ilp_nodes", "ilp_edges"}) {
    EXPECT_TRUE(json["compile"].contains(key)) << key;
  }
  EXPECT_EQ(nlohmann::json::parse(ReadFile(path)), json);  // -o writes the same document

  RunResult second = Plan({"--method", "data", "--json"});
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  nlohmann::json again = ParseJson(second);
  EXPECT_EQ(again["shardings"].dump(), json["shardings"].dump());
  EXPECT_EQ(again["estimate"].dump(), json["estimate"].dump());
}

TEST_F(AlpaCliTest, PlanHonoursAShardingsFile) {
  const std::string path = Write("pins.json", R"({"layer0.w": "{devices=[1,4]<=[4]}"})");
  RunResult r = Plan({"--mesh", "4", "--shardings", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ParseJson(r)["shardings"]["layer0.w"], "{devices=[1,4]<=[4]}");
  EXPECT_EQ(ParseJson(r)["pins"], 1);
}

TEST_F(AlpaCliTest, PlanBadInput) {
  ExpectBadInput(RunAlpa({"plan", "no-such-model", "--cluster", "p3.16xlarge:1x4"}),
                 "no-such-model");
  ExpectBadInput(RunAlpa({"plan", "mlp-tiny", "--cluster", "no-such-preset"}), "no-such-preset");
  ExpectBadInput(Plan({"--mesh", "3x3"}), "[3,3]");
  ExpectBadInput(Plan({"--method", "bogus"}), "--method");
  ExpectBadInput(Plan({"--method", "data", "--mesh", "2x2"}), "--mesh 2x2");
  RunResult budget = Plan({"--mesh", "4", "--memory-budget", "1KiB"});
  ExpectBadInput(budget, "memory budget");
  EXPECT_THAT(budget.err, HasSubstr("the least memory"));
  const std::string pins = Write("pins.json", R"({"nope": "{replicated}"})");
  ExpectBadInput(Plan({"--mesh", "4", "--shardings", pins}), "key 'nope'");

  const std::string hlo = Write("m.hlo", R"(HloModule m
ENTRY %main {
  %a = f32[8,4] parameter(0)
  ROOT %c = f32[8,4] custom-call(%a), custom_call_target="mystery"
}
)");
  ExpectBadInput(RunAlpa({"plan", hlo, "--cluster", "p3.16xlarge:1x4", "--mesh", "4"}), "%c");
  RunResult unknown = RunAlpa({"plan", hlo, "--cluster", "p3.16xlarge:1x4", "--mesh", "4"});
  EXPECT_THAT(unknown.err, HasSubstr("custom-call"));
  EXPECT_THAT(unknown.err, HasSubstr("line 4"));
  RunResult replicated = RunAlpa(
      {"plan", hlo, "--cluster", "p3.16xlarge:1x4", "--mesh", "4", "--replicate-unknown-ops"});
  EXPECT_EQ(replicated.exit_code, 0) << Describe(replicated);
  // An HLO file that does not say which parameters it updates in place has no weights to place.
  ExpectBadInput(RunAlpa({"plan", hlo, "--cluster", "p3.16xlarge:1x4", "--method", "data"}),
                 "the module has no input_output_alias");
}

}  // namespace
}  // namespace alpa::tools::testing
