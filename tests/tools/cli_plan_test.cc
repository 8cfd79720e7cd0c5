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
}

TEST_F(AlpaCliTest, PlanZero2ShardsOptimizerState) {
  nlohmann::json json = PlanJson("zero2");
  const nlohmann::json& shardings = json["shardings"];
  EXPECT_EQ(shardings["x"], kSplit0);
  EXPECT_EQ(shardings["layer0.w"], "{replicated}");
  // layer0.w is f32[16,32]: its state splits on the larger dimension, 32.
  EXPECT_EQ(shardings["layer0.w.m"], "{devices=[1,4]<=[4]}");
  EXPECT_EQ(shardings["layer1.w.v"], "{devices=[4,1]<=[4]}");
}

TEST_F(AlpaCliTest, PlanZero3ShardsWeightsAndGathersThem) {
  nlohmann::json json = PlanJson("zero3");
  const nlohmann::json& shardings = json["shardings"];
  EXPECT_EQ(shardings["layer0.w"], "{devices=[1,4]<=[4]}");
  EXPECT_EQ(shardings["layer0.w.m"], "{devices=[1,4]<=[4]}");
  EXPECT_EQ(shardings["layer1.w"], "{devices=[4,1]<=[4]}");
  EXPECT_GT(json["estimate"]["comm"]["all-gather"].get<int>(), 0);
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
  ExpectBadInput(RunAlpa({"plan", hlo, "--cluster", "p3.16xlarge:1x4", "--method", "data"}),
                 "give a zoo model");
}

}  // namespace
}  // namespace alpa::tools::testing
