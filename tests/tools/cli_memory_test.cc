// `alpa inspect MODEL --memory`: the breakdown of the naive peak of a zoo model's train step or an
// HLO file, with --json and --cluster.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

nlohmann::json RunJson(const std::vector<std::string>& args) {
  RunResult r = RunAlpa(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "") << Describe(r);
  return ParseJson(r);
}

int64_t SumOfCategories(const nlohmann::json& at_peak) {
  int64_t sum = 0;
  for (const auto& [key, bytes] : at_peak.items()) sum += bytes.get<int64_t>();
  return sum;
}

TEST(AlpaCliMemory, ZooTrainStepBreakdown) {
  const nlohmann::json summary = RunJson({"inspect", "gpt-tiny", "--json"});
  const nlohmann::json json = RunJson({"inspect", "gpt-tiny", "--memory", "--json"});
  EXPECT_EQ(json["model"], "gpt-tiny");
  EXPECT_EQ(json["config"]["batch"], 8);
  const nlohmann::json& memory = json["memory"];
  // The same naive peak as the summary, split into categories that add up to it.
  EXPECT_EQ(memory["peak_bytes"], summary["peak_memory_bytes"]);
  EXPECT_EQ(SumOfCategories(memory["at_peak"]), memory["peak_bytes"].get<int64_t>());
  // gpt-tiny trains in f32 with Adam: weights as the model counts them, m and v twice that, one
  // gradient per weight.
  const int64_t weights = summary["parameter_bytes"];
  EXPECT_EQ(memory["at_peak"]["weights"], weights);
  EXPECT_EQ(memory["at_peak"]["optimizer_state"], 2 * weights);
  EXPECT_EQ(memory["gradient_bytes"], weights);
  EXPECT_EQ(memory["static_bytes"], 4 * weights);
  EXPECT_EQ(memory["at_peak"]["batch"], 2 * 8 * 16 * 4);  // tokens, labels: s32[8,16]
  EXPECT_EQ(memory["layers"], 4);
  EXPECT_GT(memory["saved_activation_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(memory["saved_activation_bytes_per_micro_batch_by_layer"].size(), 4u);
  EXPECT_FALSE(memory["peak_instruction"].get<std::string>().empty());
}

TEST(AlpaCliMemory, RematAndMicroBatchesShrinkTheActivations) {
  const nlohmann::json plain = RunJson({"inspect", "gpt-tiny", "--memory", "--json"})["memory"];
  const nlohmann::json remat =
      RunJson({"inspect", "gpt-tiny", "--memory", "--json", "--remat"})["memory"];
  EXPECT_LT(remat["saved_activation_bytes"].get<int64_t>(),
            plain["saved_activation_bytes"].get<int64_t>());
  const nlohmann::json micro =
      RunJson({"inspect", "gpt-tiny", "--memory", "--json", "--micro-batches", "2"})["memory"];
  EXPECT_EQ(micro["micro_batches"], 2);
  EXPECT_LT(micro["saved_activation_bytes_per_micro_batch"].get<int64_t>(),
            plain["saved_activation_bytes_per_micro_batch"].get<int64_t>());
}

// On a device whose compiler updates donated buffers in place (a V100 under XLA), a train step's
// new weights and optimizer state are written over the old ones: the update no longer holds both,
// the peak moves into the backward pass, and rematerialisation lowers it by what it frees there.
// Our CPU runtime keeps the old values through the update, so on `local` the peak stays there.
TEST(AlpaCliMemory, DonatedWeightsMoveThePeakWhereRematerialisationLowersIt) {
  const std::vector<std::string> gpt = {"inspect", "mlp-tiny", "--memory", "--json"};
  auto memory_on = [&](const std::string& cluster, bool remat) {
    std::vector<std::string> args = gpt;
    args.insert(args.end(), {"--cluster", cluster, remat ? "--remat" : "--no-remat"});
    return RunJson(args)["memory"];
  };
  const nlohmann::json v100 = memory_on("v100-32gb:1x1", false);
  const nlohmann::json v100_remat = memory_on("v100-32gb:1x1", true);
  EXPECT_EQ(v100["peak_pass"], "backward");
  EXPECT_LT(v100_remat["peak_bytes"].get<int64_t>(), v100["peak_bytes"].get<int64_t>());
  EXPECT_LT(v100_remat["at_peak"]["saved_activations"].get<int64_t>(),
            v100["at_peak"]["saved_activations"].get<int64_t>());
  const nlohmann::json cpu = memory_on("local:1", false);
  EXPECT_EQ(cpu["peak_pass"], "other");  // the update, old and new values both live
  EXPECT_EQ(memory_on("local:1", true)["peak_bytes"], cpu["peak_bytes"]);
}

TEST(AlpaCliMemory, HumanReport) {
  RunResult r = RunAlpa({"inspect", "gpt-tiny", "--memory", "--layers", "3"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("model         gpt-tiny  (GPT tiny"));
  EXPECT_THAT(r.out, HasSubstr("overrides     layers 3\n"));
  EXPECT_THAT(r.out, HasSubstr("peak memory   "));
  for (const char* row : {"weights", "optimizer state", "gradients", "saved activations",
                          "temporaries", "input batch", "other parameters", "total"}) {
    EXPECT_THAT(r.out, HasSubstr("\n  " + std::string(row) + " "));
  }
  EXPECT_THAT(r.out, HasSubstr("over 5 layer(s)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("instructions by opcode")));
}

TEST_F(AlpaCliTest, HloFileParametersAreOther) {
  // kTinyDot: parameters 72 bytes, the dot's result 32: the peak 104 is all "other" parameters
  // and one temporary.
  const std::string path = Write("dot.hlo", kTinyDot);
  const nlohmann::json json = RunJson({"inspect", path, "--memory", "--json"});
  EXPECT_EQ(json["source"], path);
  const nlohmann::json& memory = json["memory"];
  EXPECT_EQ(memory["peak_bytes"], 104);
  EXPECT_EQ(memory["at_peak"]["other_parameters"], 72);
  EXPECT_EQ(memory["at_peak"]["temporaries"], 32);
  EXPECT_EQ(memory["at_peak"]["weights"], 0);
  EXPECT_EQ(memory["peak_instruction"], "dot");
  EXPECT_EQ(memory["saved_activation_bytes"], 0);
}

TEST_F(AlpaCliTest, ExportedTrainStepKeepsItsGradientTags) {
  // The value tags travel in the HLO text: the file's gradients and passes are found again, its
  // parameters (weights included) are "other".
  const std::string path = (dir_ / "step.hlo").string();
  const nlohmann::json zoo =
      RunJson({"inspect", "mlp-tiny", "--memory", "--json", "--export", path})["memory"];
  const nlohmann::json file = RunJson({"inspect", path, "--memory", "--json"})["memory"];
  EXPECT_EQ(file["peak_bytes"], zoo["peak_bytes"]);
  EXPECT_EQ(file["gradient_bytes"], zoo["gradient_bytes"]);
  EXPECT_EQ(file["at_peak"]["weights"], 0);
  EXPECT_EQ(file["at_peak"]["other_parameters"].get<int64_t>(),
            zoo["at_peak"]["weights"].get<int64_t>() +
                zoo["at_peak"]["optimizer_state"].get<int64_t>() +
                zoo["at_peak"]["batch"].get<int64_t>() +
                zoo["at_peak"]["other_parameters"].get<int64_t>());
}

// gpt-1.3b's train step in one device's naive schedule needs tens of GiB: not a 16 GB V100, but
// an 80 GB H100.
TEST(AlpaCliMemory, FitsOneDeviceOfACluster) {
  const nlohmann::json v100 =
      RunJson({"inspect", "gpt-1.3b", "--memory", "--json", "--cluster", "p3.16xlarge"});
  EXPECT_EQ(v100["one_device"]["device"], "V100-SXM2-16GB");
  EXPECT_EQ(v100["one_device"]["required_bytes"], v100["memory"]["peak_bytes"]);
  EXPECT_FALSE(v100["one_device"]["fits_in_device_memory"].get<bool>());
  EXPECT_LT(v100["one_device"]["headroom_bytes"].get<int64_t>(), 0);
  const nlohmann::json h100 =
      RunJson({"inspect", "gpt-1.3b", "--memory", "--json", "--cluster", "dgx-h100:1x1"});
  EXPECT_TRUE(h100["one_device"]["fits_in_device_memory"].get<bool>());
  EXPECT_EQ(h100["one_device"]["headroom_bytes"].get<int64_t>(),
            h100["one_device"]["device_memory_bytes"].get<int64_t>() -
                h100["memory"]["peak_bytes"].get<int64_t>());

  // The V100s' compiler keeps elementwise chains inside kernels; the local CPU cores allocate
  // every value (cost/kernel_fusion.h).
  const nlohmann::json local =
      RunJson({"inspect", "gpt-1.3b", "--memory", "--json", "--cluster", "local:1"});
  EXPECT_EQ(local["memory"]["peak_bytes"],
            RunJson({"inspect", "gpt-1.3b", "--memory", "--json"})["memory"]["peak_bytes"]);
  EXPECT_LT(v100["memory"]["peak_bytes"].get<int64_t>(),
            local["memory"]["peak_bytes"].get<int64_t>());

  RunResult text = RunAlpa({"inspect", "gpt-1.3b", "--memory", "--cluster", "p3.16xlarge"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("one device    V100-SXM2-16GB of p3.16xlarge: "));
  EXPECT_THAT(text.out, HasSubstr("does NOT fit: "));
  EXPECT_THAT(text.out, HasSubstr("the smallest device memory it fits in is "));
  ExpectBadInput(RunAlpa({"inspect", "mlp-tiny", "--memory", "--cluster", "p5.48xlarge"}),
                 "p5.48xlarge");
}

TEST(AlpaCliMemory, HelpMentionsMemory) {
  RunResult help = RunAlpa({"inspect", "--help"});
  EXPECT_EQ(help.exit_code, 0) << Describe(help);
  EXPECT_THAT(help.out, HasSubstr("--memory"));
}

}  // namespace
}  // namespace alpa::tools::testing
