// `alpa` on models of the zoo: `alpa zoo`, `alpa inspect NAME` with overrides (checked against the
// models' parameter formulas and Alpa's FLOP formula), `--export` round trips, and `alpa eval
// NAME`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Runs `alpa args...`, expects success with an empty stderr, and returns stdout as JSON.
nlohmann::json RunJson(const std::vector<std::string>& args) {
  RunResult r = RunAlpa(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "") << Describe(r);
  return ParseJson(r);
}

// The weights of the zoo's GPT (models/gpt.h): L (12 H^2 + 13 H) + V (H + 1) + S H.
int64_t GptWeights(int64_t seq, int64_t hidden, int64_t layers, int64_t vocab) {
  return layers * (12 * hidden * hidden + 13 * hidden) + vocab * (hidden + 1) + seq * hidden;
}

TEST(AlpaCliZoo, ListsTheModels) {
  RunResult r = RunAlpa({"zoo"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* name : {"gpt-1.3b", "moe-380m", "wresnet-250m", "mlp-tiny", "bert-tiny"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
  }
  EXPECT_THAT(r.out, HasSubstr("GPT 1.3b: S 1024, H 2048, L 24"));

  nlohmann::json json = RunJson({"zoo", "--json"});
  ASSERT_TRUE(json.is_array());
  std::vector<std::string> names;
  for (const nlohmann::json& entry : json) {
    names.push_back(entry["name"]);
    EXPECT_FALSE(entry["family"].get<std::string>().empty());
    EXPECT_FALSE(entry["description"].get<std::string>().empty());
  }
  EXPECT_THAT(names, ::testing::IsSupersetOf({"gpt-1.3b", "moe-380m", "wresnet-250m", "mlp-tiny"}));
}

TEST(AlpaCliZoo, HelpMentionsTheZoo) {
  RunResult help = RunAlpa({"--help"});
  EXPECT_EQ(help.exit_code, 0) << Describe(help);
  for (const char* command : {"zoo", "run", "grad"}) EXPECT_THAT(help.out, HasSubstr(command));
  RunResult inspect = RunAlpa({"inspect", "--help"});
  EXPECT_EQ(inspect.exit_code, 0) << Describe(inspect);
  for (const char* flag : {"--layers", "--micro-batches", "--dtype", "--remat", "--optimizer",
                           "--export", "alpa zoo"}) {
    EXPECT_THAT(inspect.out, HasSubstr(flag));
  }
  RunResult run = RunAlpa({"run", "--help"});
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  for (const char* flag : {"--steps", "--seed", "--json", "--batch", "2 bad input"}) {
    EXPECT_THAT(run.out, HasSubstr(flag));
  }
}

TEST(AlpaCliZoo, InspectGptTinyCountsItsWeightsAndFlops) {
  nlohmann::json json = RunJson({"inspect", "gpt-tiny", "--json"});
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json["model"], "gpt-tiny");
  EXPECT_THAT(json["description"].get<std::string>(), HasSubstr("GPT tiny"));
  // gpt-tiny: S 16, H 32, L 2, V 64.
  EXPECT_EQ(json["parameters"], GptWeights(16, 32, 2, 64));
  EXPECT_EQ(json["parameter_bytes"], 4 * GptWeights(16, 32, 2, 64));
  EXPECT_GT(json["flops"].get<double>(), 0);
  EXPECT_GT(json["flops_dot_conv"].get<double>(), 0);
  EXPECT_LT(json["flops_dot_conv"].get<double>(), json["flops"].get<double>());
  EXPECT_EQ(json["flops_dot_conv"], json["flops_by_opcode"]["dot"]);
  EXPECT_GT(json["instructions"].get<int64_t>(), 100);
  EXPECT_EQ(json["config"], (nlohmann::json{{"batch", 8},
                                            {"micro_batches", 1},
                                            {"micro_batch_size", 8},
                                            {"dtype", "f32"},
                                            {"remat", false},
                                            {"optimizer", "adam"},
                                            {"learning_rate", 0.01}}));
}

TEST(AlpaCliZoo, InspectEchoesOverridesAndTheyChangeTheModel) {
  nlohmann::json base = RunJson({"inspect", "gpt-tiny", "--json"});
  nlohmann::json json = RunJson({"inspect",     "gpt-tiny", "--json", "--layers",
                                 "3",           "--hidden", "64",     "--heads",
                                 "8",           "--seq",    "8",      "--vocab",
                                 "100",         "--batch",  "16",     "--micro-batches",
                                 "4",           "--dtype",  "bf16",   "--remat",
                                 "--optimizer", "sgd",      "--lr",   "0.5"});
  EXPECT_EQ(json["parameters"], GptWeights(8, 64, 3, 100));
  EXPECT_EQ(json["parameter_bytes"], 2 * GptWeights(8, 64, 3, 100));  // bf16
  const nlohmann::json& config = json["config"];
  EXPECT_EQ(config["batch"], 16);
  EXPECT_EQ(config["micro_batches"], 4);
  EXPECT_EQ(config["micro_batch_size"], 4);
  EXPECT_EQ(config["dtype"], "bf16");
  EXPECT_EQ(config["remat"], true);
  EXPECT_EQ(config["optimizer"], "sgd");
  EXPECT_EQ(config["learning_rate"], 0.5);
  EXPECT_EQ(config["layers"], 3);
  EXPECT_EQ(config["hidden"], 64);
  EXPECT_EQ(config["heads"], 8);
  EXPECT_EQ(config["seq"], 8);
  EXPECT_EQ(config["vocab"], 100);
  EXPECT_FALSE(config.contains("experts"));

  // Overrides of the big models' training defaults the other way.
  nlohmann::json untrained =
      RunJson({"inspect", "gpt-125m", "--json", "--layers", "1", "--no-remat", "--dtype", "f32"});
  EXPECT_EQ(untrained["config"]["remat"], false);
  EXPECT_EQ(untrained["config"]["dtype"], "f32");
  EXPECT_EQ(untrained["config"]["optimizer"], "adamw");
}

TEST(AlpaCliZoo, DotFlopsScaleWithTheGlobalBatchNotTheMicroBatches) {
  // Every dot of a transformer step is linear in the batch; the micro-batches are unrolled, so a
  // step over 16 examples costs the same whether it takes them at once or in 4 parts of 4.
  const double at8 = RunJson({"inspect", "gpt-tiny", "--json"})["flops_dot_conv"];
  const double at16 = RunJson({"inspect", "gpt-tiny", "--json", "--batch", "16"})["flops_dot_conv"];
  const double at16in4 = RunJson(
      {"inspect", "gpt-tiny", "--json", "--batch", "16", "--micro-batches", "4"})["flops_dot_conv"];
  EXPECT_EQ(at16, 2 * at8);
  EXPECT_EQ(at16in4, at16);
  // Without --batch, the zoo's batch (8) is the global one, split in two.
  nlohmann::json split = RunJson({"inspect", "gpt-tiny", "--json", "--micro-batches", "2"});
  EXPECT_EQ(split["config"]["batch"], 8);
  EXPECT_EQ(split["config"]["micro_batch_size"], 4);
  EXPECT_EQ(split["flops_dot_conv"], at8);
}

TEST(AlpaCliZoo, InspectGpt13bMatchesAlpasFlopFormula) {
  // Alpa's TFLOPS (benchmark/alpa/util.py, compute_gpt_tflops, with remat):
  //   96 B S L H^2 (1 + S / (6 H) + V / (16 L H))
  // for gpt-1.3b at the zoo's batch: B 8, S 1024, L 24, H 2048, V 51200.
  nlohmann::json json = RunJson({"inspect", "gpt-1.3b", "--json"});
  const double b = 8, s = 1024, l = 24, h = 2048, v = 51200;
  const double alpa = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  EXPECT_NEAR(json["flops_dot_conv"].get<double>() / alpa, 1.0, 1e-9);
  EXPECT_EQ(json["config"]["dtype"], "f16");
  EXPECT_EQ(json["config"]["remat"], true);
  EXPECT_EQ(json["config"]["optimizer"], "adamw");
  EXPECT_EQ(json["parameters"], GptWeights(1024, 2048, 24, 51200));
}

TEST(AlpaCliZoo, InspectGpt39bWithoutMaterialisingWeights) {
  // 39 G weights are 78 GB in f16: this only works because inspect builds the graph alone.
  nlohmann::json json = RunJson({"inspect", "gpt-39b", "--json"});
  // Alpa's formula L (12 H^2 + 11 H) + V (H + 1) for S 1024, H 8192, L 48, V 51200; ours adds the
  // position embedding and the qkv bias (models/gpt.h), 0.02% more.
  const double h = 8192, l = 48, v = 51200;
  const double alpa = l * (12 * h * h + 11 * h) + v * (h + 1);
  const double parameters = json["parameters"].get<double>();
  EXPECT_NEAR(parameters / alpa, 1.0, 0.005);
  EXPECT_EQ(json["parameters"], GptWeights(1024, 8192, 48, 51200));
  EXPECT_GT(json["flops"].get<double>(), 1e15);
}

// --cluster adds the roofline estimate on one device: an H100 beats a V100 at the same step, and
// gpt-1.3b's train step (37 GiB in the naive schedule) fits an 80 GB H100 but not a 16 GB V100.
TEST(AlpaCliZoo, InspectEstimatesOneDeviceOfACluster) {
  nlohmann::json v100 = RunJson({"inspect", "gpt-1.3b", "--cluster", "p3.16xlarge", "--json"});
  nlohmann::json h100 = RunJson({"inspect", "gpt-1.3b", "--cluster", "dgx-h100:1x1", "--json"});
  EXPECT_EQ(v100["one_device"]["device"], "V100-SXM2-16GB");
  EXPECT_EQ(h100["one_device"]["device"], "H100-SXM5-80GB");
  EXPECT_GT(v100["one_device"]["seconds"].get<double>(),
            h100["one_device"]["seconds"].get<double>());
  EXPECT_FALSE(v100["one_device"]["fits_in_device_memory"].get<bool>());
  EXPECT_TRUE(h100["one_device"]["fits_in_device_memory"].get<bool>());
  RunResult text = RunAlpa({"inspect", "mlp-tiny", "--cluster", "local:1"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("one device    cpu-core of local:1: "));
  ExpectBadInput(RunAlpa({"inspect", "mlp-tiny", "--cluster", "p5.48xlarge"}), "p5.48xlarge");
}

TEST(AlpaCliZoo, InspectHumanReport) {
  RunResult r = RunAlpa({"inspect", "gpt-tiny", "--layers", "3"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("model         gpt-tiny  (GPT tiny"));
  EXPECT_THAT(r.out, HasSubstr("overrides     layers 3\n"));
  EXPECT_THAT(r.out, HasSubstr("config        batch 8, f32, adam lr 0.01, no remat\n"));
  EXPECT_THAT(r.out, HasSubstr(std::to_string(GptWeights(16, 32, 3, 64)) + " weights"));
  EXPECT_THAT(r.out, HasSubstr("per training step"));
  EXPECT_THAT(r.out, HasSubstr("in dot and convolution"));
  EXPECT_THAT(r.out, HasSubstr("instructions by opcode"));
}

TEST_F(AlpaCliTest, ExportedTrainStepParsesBack) {
  const std::string path = (dir_ / "step.hlo").string();
  nlohmann::json zoo = RunJson({"inspect", "mlp-tiny", "--json", "--export", path,
                                "--micro-batches", "2", "--optimizer", "adamw"});
  // The file is the step itself: same counts when inspected as an HLO file.
  nlohmann::json file = RunJson({"inspect", "--json", path});
  EXPECT_EQ(file["source"], path);
  EXPECT_EQ(file["instructions"], zoo["instructions"]);
  EXPECT_EQ(file["flops"], zoo["flops"]);
  EXPECT_EQ(file["opcodes"], zoo["opcodes"]);
  EXPECT_EQ(file["module"], zoo["step"]["module"]);
  EXPECT_EQ(file["entry"]["parameters"].size(), zoo["step"]["parameters"]);

  // --print gives the same text as the export; printing the file back is a fixed point.
  RunResult printed =
      RunAlpa({"inspect", "mlp-tiny", "--print", "--micro-batches", "2", "--optimizer", "adamw"});
  ASSERT_EQ(printed.exit_code, 0) << Describe(printed);
  EXPECT_THAT(printed.out, StartsWith("HloModule "));
  EXPECT_EQ(printed.out, ReadFile(path));
  EXPECT_EQ(RunAlpa({"inspect", "--print", path}).out, printed.out);

  // An export to a place that cannot be written is bad input, and prints no report.
  ExpectBadInput(RunAlpa({"inspect", "mlp-tiny", "--export", (dir_ / "no/such/dir.hlo").string()}),
                 "--export");
}

TEST(AlpaCliZoo, EvalOfAZooModelIsTheFirstTrainingStep) {
  // eval runs the train step on the initial weights and the first batch, as `run` does.
  nlohmann::json eval = RunJson({"eval", "mlp-tiny", "--json", "--seed", "4"});
  EXPECT_EQ(eval["inputs"], "zoo");
  EXPECT_EQ(eval["module"], "mlp.train_step");
  nlohmann::json run = RunJson({"run", "mlp-tiny", "--json", "--seed", "4", "--steps", "1"});
  ASSERT_EQ(run.size(), 1u);
  EXPECT_EQ(eval["outputs"][0]["shape"], "f32[]");
  EXPECT_EQ(eval["outputs"][0]["sum"], run[0]["loss"]);
}

}  // namespace
}  // namespace alpa::tools::testing
