// The plan artifact of pipelined plans: the document's explanation fields, `alpa explain`,
// `alpa plan --validate` (re-costing a saved plan on another model or cluster), `--report`, and
// `--method auto` choosing between the pipeline planner and the single-stage one. gpt-tiny.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// gpt-tiny (4 layers) at global batch 16 in 2 micro-batches.
RunResult PlanGptTiny(std::vector<std::string> extra,
                      const std::string& cluster = "p3.16xlarge:1x4") {
  std::vector<std::string> args = {"plan",    "gpt-tiny", "--cluster",       cluster,
                                   "--batch", "16",       "--micro-batches", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunAlpa(args);
}

TEST_F(AlpaCliTest, PipelinedPlanRecordsWhyAndExplainsIt) {
  const std::string path = (dir_ / "plan.json").string();
  RunResult planned = PlanGptTiny({"--method", "pipeshard", "-o", path});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  EXPECT_THAT(planned.out, HasSubstr("alternatives on the same costs"));
  const nlohmann::json plan = nlohmann::json::parse(ReadFile(path));
  EXPECT_EQ(plan["num_layers"], 4);
  EXPECT_EQ(plan["cluster_shape"]["devices_per_host"], 4);
  for (const nlohmann::json& stage : plan["stages"]) {
    const nlohmann::json& memory = stage["memory"];
    // peak = static + in flight x activations + temporaries (pipeline/stage_memory.h).
    EXPECT_EQ(stage["peak_memory_bytes"].get<int64_t>(),
              memory["static_bytes"].get<int64_t>() +
                  memory["micro_batches_in_flight"].get<int64_t>() *
                      memory["activation_bytes_per_micro_batch"].get<int64_t>() +
                  memory["temporary_bytes"].get<int64_t>());
    ASSERT_FALSE(stage["parameters"].empty());
    EXPECT_THAT(stage["parameters"][0]["sharding"].get<std::string>(), StartsWith("{"));
  }
  // The search never loses to the alternatives it prices on the same costs.
  ASSERT_EQ(plan["alternatives"].size(), 2u);
  EXPECT_EQ(plan["alternatives"][0]["name"], "data parallel");
  EXPECT_EQ(plan["alternatives"][0]["dp"], 4);
  const double step = plan["estimate"]["step_time_s"].get<double>();
  for (const nlohmann::json& alternative : plan["alternatives"]) {
    ASSERT_TRUE(alternative["step_time_s"].is_number()) << alternative.dump();
    EXPECT_GE(alternative["step_time_s"].get<double>(), step * (1 - 1e-12));
  }

  RunResult text = RunAlpa({"explain", path});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("<- bottleneck"));
  EXPECT_THAT(text.out, HasSubstr("data parallel (dp 4, op 1, pp 1)"));
  EXPECT_THAT(text.out, HasSubstr("in flight"));
  RunResult json = RunAlpa({"explain", path, "--json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  const nlohmann::json explained = ParseJson(json);
  EXPECT_EQ(explained["kind"], "pipeline");
  ASSERT_EQ(explained["stages"].size(), plan["stages"].size());
  int bottlenecks = 0;
  for (const nlohmann::json& stage : explained["stages"])
    bottlenecks += stage["bottleneck"] ? 1 : 0;
  EXPECT_EQ(bottlenecks, 1);
  EXPECT_GE(explained["alternatives"][0]["ratio"].get<double>(), 1 - 1e-12);
}

TEST_F(AlpaCliTest, ExplainsSingleStagePlansAndRejectsOtherFiles) {
  const std::string path = (dir_ / "shard.json").string();
  RunResult planned = RunAlpa({"plan", "mlp-tiny", "--cluster", "p3.16xlarge:1x4", "--mesh", "4",
                               "--time-limit", "5", "-o", path});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  RunResult text = RunAlpa({"explain", path});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("one stage, method shard"));
  EXPECT_THAT(text.out, HasSubstr("communication"));
  // Where the peak is and what is live there, which add up to the peak.
  EXPECT_THAT(text.out, HasSubstr("peak in the "));
  RunResult json = RunAlpa({"explain", path, "--json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  const nlohmann::json peak = ParseJson(json)["peak"];
  EXPECT_THAT(peak["pass"].get<std::string>(), ::testing::AnyOf("forward", "backward", "other"));
  int64_t live = 0;
  for (const auto& [category, bytes] : peak["at_peak"].items()) live += bytes.get<int64_t>();
  EXPECT_EQ(live,
            nlohmann::json::parse(ReadFile(path))["estimate"]["peak_memory_bytes"].get<int64_t>());

  ExpectBadInput(RunAlpa({"explain", Write("x.json", R"({"format": "other"})")}),
                 "not a plan document");
  ExpectBadInput(RunAlpa({"explain", Write("bad.json", R"({"format": "alpa-plan", "version": 2,
      "num_micro_batches": 2, "estimate": {"step_time_s": 1, "pipeline_s": 1,
      "bubble_fraction": 0}, "stages": [{"forward_time_s": "fast"}]})")}),
                 "stages[0]: \"forward_time_s\" must be a number");
  ExpectBadInput(RunAlpa({"explain", (dir_ / "missing.json").string()}), "missing.json");
  // Fields of the wrong type that the explanation only displays show as "?", never an internal
  // error (a hand-edited document).
  RunResult odd = RunAlpa({"explain", Write("odd.json", R"({"format": "alpa-plan", "version": 1,
      "model": {"name": 5}, "cluster": ["x"], "mesh": "4", "estimate": {"step_time_s": 1,
      "compute_s": 1, "communication_s": 0, "resharding_s": 0, "peak_memory_bytes": 3,
      "memory_budget_bytes": 5, "comm": 7, "peak": {"pass": 4, "at_peak": {"weights": "x"}}}})")});
  EXPECT_EQ(odd.exit_code, 0) << Describe(odd);
  EXPECT_THAT(odd.out, HasSubstr("? on ?: one stage, method ?, mesh ?"));
  EXPECT_THAT(odd.out, HasSubstr("peak in the ? pass, at %?: \n"));
}

TEST_F(AlpaCliTest, ValidateRecostsASavedPlanAndSaysWhatNoLongerFits) {
  const std::string path = (dir_ / "plan.json").string();
  RunResult planned = PlanGptTiny({"--method", "pipeshard", "--json", "-o", path});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  const nlohmann::json plan = ParseJson(planned);

  // The same model and cluster: the same stages and estimate.
  RunResult same = PlanGptTiny({"--validate", path, "--json"});
  ASSERT_EQ(same.exit_code, 0) << Describe(same);
  const nlohmann::json recosted = ParseJson(same);
  EXPECT_EQ(recosted["stages"].dump(), plan["stages"].dump());
  EXPECT_EQ(recosted["estimate"].dump(), plan["estimate"].dump());
  RunResult text = PlanGptTiny({"--validate", path});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("every stage fits"));
  EXPECT_THAT(text.out, HasSubstr("1.00x the saved estimate"));

  // Devices with 1 MiB: the stage that no longer fits is named with what it needs.
  RunResult shown = RunAlpa({"cluster", "show", "p3.16xlarge:1x4", "--json"});
  ASSERT_EQ(shown.exit_code, 0) << Describe(shown);
  nlohmann::json small = ParseJson(shown);
  small["device_types"]["V100-SXM2-16GB"]["memory_bytes"] = 1 << 20;
  const std::string small_cluster = Write("small.json", small.dump());
  ExpectBadInput(PlanGptTiny({"--validate", path}, small_cluster), "its devices have 1.00 MiB");
  // Another model: the layers no longer match.
  ExpectBadInput(PlanGptTiny({"--validate", path, "--layers", "4"}),
                 "the plan cuts a model of 4 layers into stages, this model has 6");
  // Fewer devices: a sub-mesh the cluster cannot give.
  RunResult fewer = PlanGptTiny({"--validate", path}, "p3.16xlarge:1x2");
  EXPECT_EQ(fewer.exit_code, 2) << Describe(fewer);
  ExpectBadInput(PlanGptTiny({"--validate", Write("v1.json", R"({"format": "alpa-plan",
      "version": 1})")}),
                 "only pipelined plans");
}

TEST_F(AlpaCliTest, ReportWritesOneSelfContainedPage) {
  const std::string path = (dir_ / "plan.html").string();
  RunResult planned = PlanGptTiny({"--method", "pipeshard", "--report", path});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  const std::string page = ReadFile(path);
  EXPECT_THAT(page, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(page, HasSubstr("gpt-tiny"));
  EXPECT_THAT(page, HasSubstr("<svg"));
  ExpectBadInput(RunAlpa({"plan", "mlp-tiny", "--cluster", "p3.16xlarge:1x4", "--mesh", "4",
                          "--report", path}),
                 "--report is for pipelined plans");
}

TEST_F(AlpaCliTest, SearchesTheMicroBatchCountWithTheStages) {
  RunResult r = RunAlpa({"plan", "gpt-tiny", "--cluster", "p3.16xlarge:1x4", "--batch", "16",
                         "--search-micro-batches", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json plan = ParseJson(r);
  const nlohmann::json& trials = plan["micro_batch_search"];
  ASSERT_GE(trials.size(), 3u);
  int64_t expected_count = 1;
  double fastest = 1e300;
  int64_t fastest_count = 0;
  for (const nlohmann::json& trial : trials) {
    EXPECT_EQ(trial["num_micro_batches"], expected_count);  // 1, 2, 4, ... in order
    expected_count *= 2;
    if (trial["step_time_s"].is_number() && trial["step_time_s"].get<double>() < fastest) {
      fastest = trial["step_time_s"].get<double>();
      fastest_count = trial["num_micro_batches"].get<int64_t>();
    }
  }
  EXPECT_EQ(plan["num_micro_batches"], fastest_count);
  EXPECT_EQ(plan["estimate"]["step_time_s"].get<double>(), fastest);
  EXPECT_EQ(plan["micro_batch_size"], 16 / fastest_count);
  ExpectBadInput(PlanGptTiny({"--search-micro-batches"}), "leave out --micro-batches");
  // Without --micro-batches the search is the default, with the same answer.
  RunResult by_default =
      RunAlpa({"plan", "gpt-tiny", "--cluster", "p3.16xlarge:1x4", "--batch", "16", "--json"});
  ASSERT_EQ(by_default.exit_code, 0) << Describe(by_default);
  const nlohmann::json searched = ParseJson(by_default);
  EXPECT_EQ(searched["micro_batch_search"], trials);
  EXPECT_EQ(searched["num_micro_batches"], fastest_count);
}

// On a terminal (script(1) gives the command one) each count tried is reported with the best so
// far; piped, as above, nothing but the plan is printed.
TEST_F(AlpaCliTest, MicroBatchSearchShowsTheBestSoFarOnATerminal) {
  const std::string command = std::string(ALPA_BINARY) +
                              " plan gpt-tiny --cluster p3.16xlarge:1x4 --batch 16"
                              " --search-micro-batches -o " +
                              (dir_ / "plan.json").string();
  RunResult r = RunProgram("script", {"-qec", command, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("micro-batch search: M = 1 (global batch 16): "));
  EXPECT_THAT(r.out, HasSubstr("; best so far M = 1 at "));
  EXPECT_THAT(r.out, HasSubstr("micro-batch search: M = 4 (global batch 16): "));
}

TEST_F(AlpaCliTest, AutoMethodPipelinesZooModelsAndShardsTheRest) {
  RunResult zoo = PlanGptTiny({"--json"});
  ASSERT_EQ(zoo.exit_code, 0) << Describe(zoo);
  EXPECT_EQ(ParseJson(zoo)["version"], 2);
  RunResult with_mesh = PlanGptTiny({"--mesh", "4", "--time-limit", "5", "--json"});
  ASSERT_EQ(with_mesh.exit_code, 0) << Describe(with_mesh);
  EXPECT_EQ(ParseJson(with_mesh)["version"], 1);
  RunResult hlo =
      RunAlpa({"plan", ExamplePath("mlp_train_step.hlo"), "--cluster", "p3.16xlarge:1x2",
               "--time-limit", "5", "--replicate-unknown-ops", "--json"});
  ASSERT_EQ(hlo.exit_code, 0) << Describe(hlo);
  EXPECT_EQ(ParseJson(hlo)["method"], "shard");
}

}  // namespace
}  // namespace alpa::tools::testing
