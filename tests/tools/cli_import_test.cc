// Models users bring (examples/import/): `alpa inspect|plan|run model.onnx` trains PyTorch's
// exports with their own weights, and `alpa ... loss.hlo --weights params` a JAX loss function's
// HLO, like zoo models: on in-process devices under the data, zero3, shard and pipeshard methods,
// each step held to the reference interpreter by --check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

#ifndef ALPA_EXAMPLES_DIR
#error "ALPA_EXAMPLES_DIR is defined by tests/tools/CMakeLists.txt"
#endif

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

std::string Example(const std::string& name) {
  return std::string(ALPA_EXAMPLES_DIR) + "/import/" + name + ".onnx";
}

std::string JaxExample(const std::string& name) {
  return std::string(ALPA_EXAMPLES_DIR) + "/import/" + name + ".hlo";
}

// `model` names examples/import/MODEL.onnx, trained with --loss `loss`, or, with `loss` empty,
// examples/import/MODEL.hlo, a JAX loss trained in `--weights params`.
struct ImportRun {
  std::string model;
  std::string loss;
  std::string method;
};

std::string RunName(const ::testing::TestParamInfo<ImportRun>& info) {
  return info.param.model + "_" + info.param.method;
}

class CliImportRunTest : public ::testing::TestWithParam<ImportRun> {};

// Twelve steps: the synthetic batches cycle through kBatchPool = 4 (models/forward_loss.h), so
// steps i and i + 8 see the same batch, and the loss on it must have fallen.
TEST_P(CliImportRunTest, TrainsOnFourDevicesAsTheReferenceDoes) {
  const ImportRun& run = GetParam();
  std::vector<std::string> args = {"run",     "--lr",     "0.01",     "--cluster",
                                   "local:4", "--method", run.method, "--steps",
                                   "12",      "--check",  "--json"};
  if (run.loss.empty()) {
    args.insert(args.end(), {JaxExample(run.model), "--weights", "params"});
  } else {
    args.insert(args.end(), {Example(run.model), "--loss", run.loss});
  }
  RunResult r = RunAlpa(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["check"]["passed"], true) << json["check"].dump(2);
  const nlohmann::json& steps = json["steps"];
  ASSERT_EQ(steps.size(), 12u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_LT(steps[i + 8]["loss"].get<double>(), steps[i]["loss"].get<double>())
        << "step " << i + 1 << " and step " << i + 9 << " (the same batch)";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, CliImportRunTest,
    ::testing::Values(ImportRun{"mlp", "mse", "data"}, ImportRun{"mlp", "mse", "zero3"},
                      ImportRun{"mlp", "mse", "shard"}, ImportRun{"gpt2", "cross-entropy", "data"},
                      ImportRun{"gpt2", "cross-entropy", "zero3"},
                      ImportRun{"gpt2", "cross-entropy", "shard"},
                      ImportRun{"encoder_lm", "cross-entropy", "data"},
                      ImportRun{"encoder_lm", "cross-entropy", "zero3"},
                      ImportRun{"encoder_lm", "cross-entropy", "shard"},
                      ImportRun{"resnet", "cross-entropy", "data"},
                      ImportRun{"resnet", "cross-entropy", "zero3"},
                      ImportRun{"resnet", "cross-entropy", "shard"},
                      ImportRun{"jax_mlp", "", "data"}, ImportRun{"jax_mlp", "", "zero3"},
                      ImportRun{"jax_mlp", "", "shard"}, ImportRun{"jax_gpt", "", "data"},
                      ImportRun{"jax_gpt", "", "zero3"}, ImportRun{"jax_gpt", "", "shard"}),
    RunName);

// Pipelined: the operators clustered into two layers (--auto-layers), each a stage on two of
// the four devices, 1F1B over two micro-batches; the stage programs hold the loss, weights and
// optimizer state to the reference interpreter's, as the single-stage methods do.
class CliImportPipelineTest : public AlpaCliTest,
                              public ::testing::WithParamInterface<ImportRun> {};

TEST_P(CliImportPipelineTest, RunsInTwoStagesAsTheReferenceDoes) {
  const ImportRun& run = GetParam();
  const std::string stages = Write("stages.json", R"({"layers": 2, "stages": [
      {"layers": [0], "submesh": [1, 2], "logical_mesh": [2, 1]},
      {"layers": [1], "submesh": [1, 2], "logical_mesh": [1, 2]}]})");
  std::vector<std::string> args = {"run",       "--cluster",       "local:4", "--method",
                                   "pipeshard", "--auto-layers",   "2",       "--micro-batches",
                                   "2",         "--manual-stages", stages,    "--steps",
                                   "3",         "--check",         "--json"};
  if (run.loss.empty()) {
    args.insert(args.end(), {JaxExample(run.model), "--weights", "params"});
  } else {
    args.insert(args.end(), {Example(run.model), "--loss", run.loss});
  }
  RunResult r = RunAlpa(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  ASSERT_EQ(json["summary"]["stages"].size(), 2u) << json["summary"].dump(2);
  EXPECT_EQ(json["summary"]["stages"][1]["layers"], nlohmann::json::parse("[1, 1]"));
  EXPECT_EQ(json["steps"].size(), 3u);
  EXPECT_EQ(json["check"]["passed"], true);
}

INSTANTIATE_TEST_SUITE_P(Examples, CliImportPipelineTest,
                         ::testing::Values(ImportRun{"mlp", "mse", "pipeshard"},
                                           ImportRun{"gpt2", "cross-entropy", "pipeshard"},
                                           ImportRun{"encoder_lm", "cross-entropy", "pipeshard"},
                                           ImportRun{"resnet", "cross-entropy", "pipeshard"},
                                           ImportRun{"jax_gpt", "", "pipeshard"}),
                         RunName);

TEST(CliImportTest, AJaxLossPlansInPipelineStagesFromItsOperators) {
  RunResult r = RunAlpa({"plan", JaxExample("jax_gpt"), "--weights", "params", "--cluster",
                         "local:4", "--auto-layers", "2", "--micro-batches", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["method"], "pipeshard") << json.dump(2);
}

// The parameter count and the forward pass's FLOPs in matmuls and convolutions equal PyTorch's
// own counts (export_models.py wrote them beside each model: sum of numel, FlopCounterMode).
TEST(CliImportTest, InspectCountsPyTorchsParametersAndFlops) {
  for (const std::string name : {"mlp", "encoder_lm", "gpt2", "alpa_gpt", "resnet"}) {
    std::ifstream file(std::string(ALPA_EXAMPLES_DIR) + "/import/" + name + ".expected.json");
    ASSERT_TRUE(file) << name;
    const nlohmann::json expected = nlohmann::json::parse(file);
    RunResult r = RunAlpa(
        {"inspect", Example(name), "--loss", name == "mlp" ? "mse" : "cross-entropy", "--json"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const nlohmann::json json = ParseJson(r);
    EXPECT_EQ(json["parameters"], expected["parameters"]) << name;
    EXPECT_EQ(json["forward_flops_dot_conv"].get<double>(), expected["forward_flops"].get<double>())
        << name;
  }
}

TEST(CliImportTest, TheBatchFlagResizesTheExportedBatch) {
  RunResult r = RunAlpa(
      {"run", Example("gpt2"), "--batch", "8", "--micro-batches", "2", "--steps", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  ASSERT_EQ(json.size(), 2u) << json.dump(2);
}

TEST(CliImportTest, BadFlagsAndFilesAreNamedErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"inspect", Example("gpt2"), "--loss", "hinge"}, "--loss hinge: unknown loss"},
      {{"inspect", Example("gpt2"), "--loss", "output"}, "not a scalar; use --loss cross-entropy"},
      {{"inspect", Example("gpt2"), "--layers", "2"}, "--layers applies to models of the zoo only"},
      {{"inspect", "gpt-tiny", "--loss", "mse"}, "--loss applies to imported (ONNX) models"},
      {{"inspect", Example("absent")}, "cannot open the file"},
      {{"inspect", Example("mlp"), "--weights", "0"}, "--weights applies to HLO losses"},
      {{"inspect", JaxExample("jax_mlp"), "--weights", "10"},
       "--weights 10: '10' is out of range; the module has 10 parameters (0 to 9)"},
      {{"inspect", JaxExample("jax_mlp"), "--weights", "weights"},
       "no parameter's name starts with 'weights'; the parameters are params__params____Dense_0"},
      {{"inspect", JaxExample("jax_gpt"), "--weights", "params,tokens"},
       "(%tokens.1) is s32[4,16]"},
      {{"inspect", JaxExample("jax_mlp"), "--weights", "0-9"}, "the batch must be one"},
      {{"inspect", JaxExample("jax_mlp"), "--weights", "params", "--loss", "mse"},
       "--loss does not apply to an HLO loss"},
      {{"inspect", JaxExample("jax_mlp"), "--weights", "params", "--batch", "16"},
       "the module fixes its batch at 8"},
      {{"inspect", std::string(ALPA_EXAMPLES_DIR) + "/mlp_train_step.hlo", "--weights", "0"},
       "not a scalar loss"},
  };
  for (const auto& [args, message] : cases) {
    RunResult r = RunAlpa(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr(message)) << Describe(r);
  }
}

}  // namespace
}  // namespace alpa::tools::testing
