// `alpa inspect|plan|run model.onnx`: the PyTorch exports of examples/import/ train like zoo
// models, with their own weights, on in-process devices under the data, zero3 and shard methods,
// each step held to the reference interpreter by --check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

struct OnnxRun {
  std::string model;
  std::string loss;
  std::string method;
};

std::string RunName(const ::testing::TestParamInfo<OnnxRun>& info) {
  return info.param.model + "_" + info.param.method;
}

class CliOnnxRunTest : public ::testing::TestWithParam<OnnxRun> {};

// Twelve steps: the synthetic batches cycle through kBatchPool = 4 (models/forward_loss.h), so
// steps i and i + 8 see the same batch, and the loss on it must have fallen.
TEST_P(CliOnnxRunTest, TrainsOnFourDevicesAsTheReferenceDoes) {
  const OnnxRun& run = GetParam();
  RunResult r = RunAlpa({"run", Example(run.model), "--loss", run.loss, "--lr", "0.01", "--cluster",
                         "local:4", "--method", run.method, "--steps", "12", "--check", "--json"});
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

INSTANTIATE_TEST_SUITE_P(Examples, CliOnnxRunTest,
                         ::testing::Values(OnnxRun{"mlp", "mse", "data"},
                                           OnnxRun{"mlp", "mse", "zero3"},
                                           OnnxRun{"mlp", "mse", "shard"},
                                           OnnxRun{"gpt2", "cross-entropy", "data"},
                                           OnnxRun{"gpt2", "cross-entropy", "zero3"},
                                           OnnxRun{"gpt2", "cross-entropy", "shard"},
                                           OnnxRun{"encoder_lm", "cross-entropy", "data"},
                                           OnnxRun{"encoder_lm", "cross-entropy", "zero3"},
                                           OnnxRun{"encoder_lm", "cross-entropy", "shard"},
                                           OnnxRun{"resnet", "cross-entropy", "data"},
                                           OnnxRun{"resnet", "cross-entropy", "zero3"},
                                           OnnxRun{"resnet", "cross-entropy", "shard"}),
                         RunName);

TEST(CliOnnxTest, InspectCountsPyTorchsParameters) {
  RunResult r = RunAlpa({"inspect", Example("gpt2"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["parameters"], 53440) << json.dump(2);
}

TEST(CliOnnxTest, TheBatchFlagResizesTheExportedBatch) {
  RunResult r = RunAlpa(
      {"run", Example("gpt2"), "--batch", "8", "--micro-batches", "2", "--steps", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  ASSERT_EQ(json.size(), 2u) << json.dump(2);
}

TEST(CliOnnxTest, BadFlagsAndFilesAreNamedErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"inspect", Example("gpt2"), "--loss", "hinge"}, "--loss hinge: unknown loss"},
      {{"inspect", Example("gpt2"), "--loss", "output"}, "not a scalar; use --loss cross-entropy"},
      {{"inspect", Example("gpt2"), "--layers", "2"}, "--layers applies to models of the zoo only"},
      {{"inspect", "gpt-tiny", "--loss", "mse"}, "--loss applies to imported (ONNX) models"},
      {{"inspect", Example("absent")}, "cannot open the file"},
  };
  for (const auto& [args, message] : cases) {
    RunResult r = RunAlpa(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr(message)) << Describe(r);
  }
}

}  // namespace
}  // namespace alpa::tools::testing
