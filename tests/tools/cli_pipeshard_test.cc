// `alpa plan --method pipeshard`: the plan document's stages, determinism, manual stages (Alpa's
// pre-found solutions in examples/alpa-solutions) and the bad-input contract, on gpt-tiny.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

// gpt-tiny (4 layers) at global batch 16 in 2 micro-batches on one host of 4 V100s.
RunResult PlanGptTiny(const std::string& method, std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "plan",    "gpt-tiny", "--method",        method, "--cluster", "p3.16xlarge:1x4",
      "--batch", "16",       "--micro-batches", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunAlpa(args);
}

RunResult Pipeshard(std::vector<std::string> extra) {
  return PlanGptTiny("pipeshard", std::move(extra));
}

TEST_F(AlpaCliTest, PipeshardPlanHasStagesAndIsDeterministic) {
  RunResult first = Pipeshard({"--json"});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  const nlohmann::json plan = ParseJson(first);
  EXPECT_EQ(plan["version"], 2);
  EXPECT_EQ(plan["method"], "pipeshard");
  EXPECT_EQ(plan["num_micro_batches"], 2);
  EXPECT_EQ(plan["micro_batch_size"], 8);
  int64_t devices = 0, next_layer = 0;
  for (const nlohmann::json& stage : plan["stages"]) {
    EXPECT_EQ(stage["layers"][0], next_layer);
    next_layer = stage["layers"][1].get<int64_t>() + 1;
    devices += static_cast<int64_t>(stage["devices"].size());
    for (const char* key : {"submesh", "logical_mesh", "forward_time_s", "backward_time_s",
                            "update_time_s", "peak_memory_bytes", "comm"}) {
      EXPECT_TRUE(stage.contains(key)) << key;
    }
  }
  EXPECT_EQ(next_layer, 4);  // gpt-tiny: embedding, 2 blocks, head
  EXPECT_EQ(devices, 4);
  for (const char* key : {"total_s", "layer_costs_s", "stage_dp_s", "intra_op_solves"}) {
    EXPECT_TRUE(plan["compile"].contains(key)) << key;
  }
  RunResult second = Pipeshard({"--json"});
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  nlohmann::json again = ParseJson(second);
  EXPECT_EQ(again["stages"].dump(), plan["stages"].dump());
  EXPECT_EQ(again["estimate"].dump(), plan["estimate"].dump());

  RunResult text = Pipeshard({});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("Alpa's formula"));
  EXPECT_THAT(text.out, HasSubstr("peak memory"));
}

// gpt-tiny plans as one stage of 1.23 MiB per device on 16 GiB V100s; in a budget of 600 KiB the
// planner must find stages that each fit in it.
TEST_F(AlpaCliTest, PipeshardPlansWithinAMemoryBudget) {
  constexpr int64_t kBudget = 600 * 1024;
  RunResult unbounded = Pipeshard({"--json"});
  ASSERT_EQ(unbounded.exit_code, 0) << Describe(unbounded);
  const nlohmann::json free_plan = ParseJson(unbounded);
  EXPECT_TRUE(free_plan["memory_budget_bytes"].is_null());
  int64_t largest_peak = 0;
  for (const nlohmann::json& stage : free_plan["stages"]) {
    largest_peak = std::max(largest_peak, stage["peak_memory_bytes"].get<int64_t>());
  }
  ASSERT_GT(largest_peak, kBudget);  // else the budget below would test nothing

  // --method auto with a zoo model stays the pipeline planner under a budget.
  RunResult budgeted = RunAlpa({"plan", "gpt-tiny", "--cluster", "p3.16xlarge:1x4", "--batch", "16",
                                "--micro-batches", "2", "--memory-budget", "600KiB", "--json"});
  ASSERT_EQ(budgeted.exit_code, 0) << Describe(budgeted);
  const nlohmann::json plan = ParseJson(budgeted);
  EXPECT_EQ(plan["method"], "pipeshard");
  EXPECT_EQ(plan["memory_budget_bytes"], kBudget);
  EXPECT_EQ(plan["cluster_shape"]["device_memory_bytes"], int64_t{16} << 30);  // as described
  for (const nlohmann::json& stage : plan["stages"]) {
    EXPECT_LE(stage["peak_memory_bytes"].get<int64_t>(), kBudget);
    EXPECT_EQ(stage["device_memory_bytes"], kBudget);
  }
  RunResult text = Pipeshard({"--memory-budget", "600KiB"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("600 KiB per device (--memory-budget)"));

  ExpectBadInput(Pipeshard({"--memory-budget", "1KiB"}),
                 "--memory-budget 1.00 KiB: no stage plan fits the cluster's 4 devices");
  ExpectBadInput(Pipeshard({"--memory-budget", "-5"}), "give a positive size");
}

TEST_F(AlpaCliTest, PipeshardEvaluatesManualStages) {
  const std::string path = Write("stages.json", R"({"layers": 2, "schedule": "gpipe",
    "stages": [{"layers": [0], "submesh": [1, 2], "logical_mesh": [2, 1],
                "force_batch_dim_to_mesh_dim": 0},
               {"layers": [1], "submesh": [1, 2], "logical_mesh": [2, 1]}]})");
  RunResult r = Pipeshard({"--manual-stages", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json plan = ParseJson(r);
  EXPECT_EQ(plan["schedule"], "gpipe");
  ASSERT_EQ(plan["stages"].size(), 2u);
  EXPECT_EQ(plan["stages"][0]["logical_mesh"], nlohmann::json::array({2}));
  EXPECT_EQ(plan["stages"][0]["force_batch_dim_to_mesh_dim"], 0);
  EXPECT_EQ(plan["stages"][1]["logical_mesh"], nlohmann::json::array({2}));
  EXPECT_TRUE(plan["stages"][1]["force_batch_dim_to_mesh_dim"].is_null());
  // Two groups of gpt-tiny's 4 layers cover them all.
  EXPECT_EQ(plan["stages"][0]["layers"][0], 0);
  EXPECT_EQ(plan["stages"][1]["layers"][1], 3);
}

TEST_F(AlpaCliTest, UniformPlansFollowMegatronsGrid) {
  RunResult fixed = PlanGptTiny("uniform", {"--dp", "2", "--op", "1", "--pp", "2", "--json"});
  ASSERT_EQ(fixed.exit_code, 0) << Describe(fixed);
  const nlohmann::json plan = ParseJson(fixed);
  EXPECT_EQ(plan["method"], "uniform");
  ASSERT_EQ(plan["stages"].size(), 2u);
  for (const nlohmann::json& stage : plan["stages"]) {
    EXPECT_EQ(stage["submesh"], nlohmann::json::array({1, 2}));
    EXPECT_EQ(stage["logical_mesh"], nlohmann::json::array({2}));
    EXPECT_EQ(stage["force_batch_dim_to_mesh_dim"], 0);
  }
  // Without (dp, op, pp): every grid point, the fastest kept; the search is never slower.
  RunResult grid = PlanGptTiny("uniform", {"--json"});
  ASSERT_EQ(grid.exit_code, 0) << Describe(grid);
  const nlohmann::json best = ParseJson(grid);
  double fastest = 1e300;
  for (const nlohmann::json& point : best["grid"]) {
    if (!point["step_time_s"].is_null())
      fastest = std::min(fastest, point["step_time_s"].get<double>());
  }
  EXPECT_GE(best["grid"].size(), 4u);  // pp 1, 2, 4 with op 1, 2, 4 where they divide
  EXPECT_EQ(best["estimate"]["step_time_s"].get<double>(), fastest);
  RunResult searched = Pipeshard({"--json"});
  ASSERT_EQ(searched.exit_code, 0) << Describe(searched);
  EXPECT_LE(ParseJson(searched)["estimate"]["step_time_s"].get<double>(), fastest * (1 + 1e-12));

  ExpectBadInput(PlanGptTiny("uniform", {"--dp", "3", "--op", "1", "--pp", "1"}),
                 "the product must be the cluster's 4 devices");
  ExpectBadInput(PlanGptTiny("uniform", {"--dp", "2"}), "give all of --dp");
  // 8 micro-batches of 2 rows: the batch cannot be forced over 4 data-parallel devices.
  ExpectBadInput(
      RunAlpa({"plan", "gpt-tiny", "--method", "uniform", "--cluster", "p3.16xlarge:1x4", "--batch",
               "16", "--micro-batches", "8", "--dp", "4", "--op", "1", "--pp", "1"}),
      "a micro-batch of 2 does not split over 4 data-parallel devices");
  ExpectBadInput(PlanGptTiny("shard", {"--pp", "2"}), "are for --method uniform");
}

// examples/clusters/heterogeneous.json: 3 hosts of 8 V100s and one of 4 A100s. Each stage names
// its devices' type, and --validate re-costs the plan on the same types.
TEST_F(AlpaCliTest, PipeshardPlansAHeterogeneousCluster) {
  const std::vector<std::string> args = {"plan",      "gpt-tiny",
                                         "--cluster", ExamplePath("clusters/heterogeneous.json"),
                                         "--method",  "pipeshard"};
  std::vector<std::string> to_file = args;
  const std::string saved = (dir_ / "hetero.json").string();
  to_file.insert(to_file.end(), {"-o", saved});
  RunResult planned = RunAlpa(to_file);
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  EXPECT_THAT(planned.out, HasSubstr("A100-SXM4-40GB"));
  const nlohmann::json plan = nlohmann::json::parse(ReadFile(saved));
  std::set<std::string> types;
  int64_t devices = 0;
  for (const nlohmann::json& stage : plan["stages"]) {
    types.insert(stage["device_type"].get<std::string>());
    devices += static_cast<int64_t>(stage["devices"].size());
  }
  EXPECT_EQ(types, (std::set<std::string>{"V100-SXM2-16GB", "A100-SXM4-40GB"}));
  EXPECT_EQ(devices, 28);
  std::vector<std::string> validate = args;
  validate.insert(validate.end(), {"--validate", saved});
  RunResult recosted = RunAlpa(validate);
  ASSERT_EQ(recosted.exit_code, 0) << Describe(recosted);
  EXPECT_THAT(recosted.out, HasSubstr("every stage fits"));
}

// Interleaved 1F1B from a manual stage file: 4 one-layer stages in 2 chunks on 2 device groups of
// 2. The saved plan records the chunks; explain names them and --validate re-costs the same plan.
TEST_F(AlpaCliTest, InterleavedManualStagesRoundTrip) {
  const std::string stages = Write("interleaved.json", R"({"layers": 4,
    "schedule": "interleaved-1f1b", "num_chunks": 2, "stages": [
    {"layers": [0], "submesh": [1, 2], "logical_mesh": [2, 1], "force_batch_dim_to_mesh_dim": 0},
    {"layers": [1], "submesh": [1, 2], "logical_mesh": [2, 1], "force_batch_dim_to_mesh_dim": 0},
    {"layers": [2], "submesh": [1, 2], "logical_mesh": [2, 1], "force_batch_dim_to_mesh_dim": 0},
    {"layers": [3], "submesh": [1, 2], "logical_mesh": [2, 1], "force_batch_dim_to_mesh_dim": 0}]})");
  const std::string saved = (dir_ / "plan.json").string();
  RunResult planned = Pipeshard({"--manual-stages", stages, "-o", saved});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  const nlohmann::json plan = nlohmann::json::parse(ReadFile(saved));
  EXPECT_EQ(plan["schedule"], "interleaved-1f1b");
  EXPECT_EQ(plan["num_chunks"], 2);
  ASSERT_EQ(plan["stages"].size(), 4u);
  EXPECT_EQ(plan["stages"][2]["devices"], plan["stages"][0]["devices"]);
  EXPECT_NE(plan["stages"][1]["devices"], plan["stages"][0]["devices"]);
  RunResult explained = RunAlpa({"explain", saved});
  ASSERT_EQ(explained.exit_code, 0) << Describe(explained);
  EXPECT_THAT(explained.out, HasSubstr("interleaved-1f1b (2 chunks per device"));
  RunResult recosted = Pipeshard({"--validate", saved});
  ASSERT_EQ(recosted.exit_code, 0) << Describe(recosted);
  EXPECT_THAT(recosted.out, HasSubstr("(1.00x the saved estimate)"));
}

// --auto-layers: the model's operators clustered into N layers (Alpa's automatic layers).
TEST_F(AlpaCliTest, AutoLayersClusterTheModelsOperators) {
  RunResult planned = Pipeshard({"--auto-layers", "3", "--json"});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  EXPECT_EQ(ParseJson(planned)["num_layers"], 3);
  ExpectBadInput(Pipeshard({"--auto-layers", "100000"}), "--auto-layers 100000");
  RunResult zero = Pipeshard({"--auto-layers", "0"});
  EXPECT_EQ(zero.exit_code, 2) << Describe(zero);
}

// Fewer micro-batches than pipeline stages, forced by the user: the plan is priced by the
// simulator and a warning explains why Alpa's formula is no guide; enough micro-batches, none.
TEST_F(AlpaCliTest, FewerMicroBatchesThanStagesWarn) {
  auto uniform = [](const std::string& micro_batches) {
    return RunAlpa({"plan", "gpt-tiny", "--method", "uniform", "--cluster", "p3.16xlarge:1x4",
                    "--batch", "16", "--micro-batches", micro_batches, "--dp", "1", "--op", "1",
                    "--pp", "4", "--json"});
  };
  RunResult few = uniform("1");
  ASSERT_EQ(few.exit_code, 0) << Describe(few);
  const nlohmann::json warned = ParseJson(few);
  ASSERT_EQ(warned["warnings"].size(), 1u) << warned.dump(2);
  EXPECT_THAT(warned["warnings"][0].get<std::string>(),
              HasSubstr("1 micro-batch for 4 pipeline stages"));
  RunResult enough = uniform("4");
  ASSERT_EQ(enough.exit_code, 0) << Describe(enough);
  EXPECT_TRUE(ParseJson(enough)["warnings"].empty());
}

TEST_F(AlpaCliTest, PipeshardBadInput) {
  const std::string gap = Write("gap.json", R"({"layers": 3, "stages": [
    {"layers": [0], "submesh": [1, 2], "logical_mesh": [2, 1]},
    {"layers": [2], "submesh": [1, 2], "logical_mesh": [2, 1]}]})");
  ExpectBadInput(Pipeshard({"--manual-stages", gap}), "layer 2 where 1 comes next");
  const std::string short_file = Write("short.json", R"({"layers": 2, "stages": [
    {"layers": [0], "submesh": [1, 4], "logical_mesh": [4, 1]}]})");
  ExpectBadInput(Pipeshard({"--manual-stages", short_file}), "layers 1..1 are missing");
  const std::string mesh = Write("mesh.json", R"({"layers": 1, "stages": [
    {"layers": [0], "submesh": [2, 2], "logical_mesh": [4, 1]}]})");
  ExpectBadInput(Pipeshard({"--manual-stages", mesh}),
                 "stages[0]: the sub-mesh [2,2] as logical mesh [4,1] is not among the "
                 "configurations planned");
  // 3 devices of a host are a sub-mesh (uneven stages), but not the whole cluster.
  const std::string three = Write("three.json", R"({"layers": 1, "stages": [
    {"layers": [0], "submesh": [1, 3], "logical_mesh": [3, 1]}]})");
  ExpectBadInput(Pipeshard({"--manual-stages", three}),
                 "the stages' sub-meshes have 3 devices in all, the cluster 4");
  const std::string bad = Write("bad.json", R"({"layers": 1, "stages": [{"layers": [0]}]})");
  ExpectBadInput(Pipeshard({"--manual-stages", bad}), "missing \"submesh\"");
  ExpectBadInput(Pipeshard({"--mesh", "2x2"}), "--mesh 2x2");
  const std::string hlo = Write("m.hlo", "HloModule m\n");
  ExpectBadInput(RunAlpa({"plan", hlo, "--method", "pipeshard", "--cluster", "p3.16xlarge:1x4"}),
                 "needs a model with weights and a loss");
  RunResult tiny = RunAlpa(
      {"plan", "gpt-tiny", "--method", "pipeshard", "--cluster", "examples/clusters/no-such.json"});
  EXPECT_EQ(tiny.exit_code, 2);
}

}  // namespace
}  // namespace alpa::tools::testing
