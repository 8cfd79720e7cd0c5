// Models users bring (examples/import/): `alpa inspect|plan|run model.onnx` trains PyTorch's
// exports with their own weights, and `alpa ... loss.hlo --weights params` a JAX loss function's
// HLO, like zoo models: on in-process devices under the data, zero3, shard and pipeshard methods,
// each step held to the reference interpreter by --check, on synthetic batches or the user's;
// and whole train steps dumped by PyTorch/XLA, planned and trained with the data-parallel methods.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
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

// The model's arguments: the ONNX file with its loss, or the JAX loss with its weights.
void AppendModel(const ImportRun& run, std::vector<std::string>& args) {
  if (run.loss.empty()) {
    args.insert(args.end(), {JaxExample(run.model), "--weights", "params"});
  } else {
    args.insert(args.end(), {Example(run.model), "--loss", run.loss});
  }
}

class CliImportRunTest : public ::testing::TestWithParam<ImportRun> {};

// Twelve steps: the synthetic batches cycle through kBatchPool = 4 (models/forward_loss.h), so
// steps i and i + 8 see the same batch, and the loss on it must have fallen.
TEST_P(CliImportRunTest, TrainsOnFourDevicesAsTheReferenceDoes) {
  const ImportRun& run = GetParam();
  std::vector<std::string> args = {"run",     "--lr",     "0.01",     "--cluster",
                                   "local:4", "--method", run.method, "--steps",
                                   "12",      "--check",  "--json"};
  AppendModel(run, args);
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
  AppendModel(run, args);
  // Adam's first steps move each weight by about lr times the sign of its gradient, and the
  // ResNet's convolutions ahead of a batch norm have gradients at the rounding noise of a sharded
  // sum: their signs, and so the weights' second moments a step later, differ from the
  // reference's by more than the check allows on some plans, with the interpreter's kernels as
  // with ours. Plain SGD keeps each difference at its rounding.
  if (run.model == "resnet") args.insert(args.end(), {"--optimizer", "sgd"});
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

// A loss Alpa lowered with its pipeline markers (examples/import/alpa_mlp.hlo): its two layers
// are Alpa's, without --auto-layers, and run as two stages.
TEST_F(AlpaCliTest, AlpasPipelineMarkersAreTheLayers) {
  const std::string stages = Write("stages.json", R"({"layers": 2, "stages": [
      {"layers": [0], "submesh": [1, 2], "logical_mesh": [1, 2]},
      {"layers": [1], "submesh": [1, 2], "logical_mesh": [2, 1]}]})");
  RunResult r = RunAlpa({"run", JaxExample("alpa_mlp"), "--weights", "params", "--cluster",
                         "local:4", "--method", "pipeshard", "--micro-batches", "2",
                         "--manual-stages", stages, "--steps", "3", "--check", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  ASSERT_EQ(json["summary"]["stages"].size(), 2u) << json["summary"].dump(2);
  EXPECT_EQ(json["check"]["passed"], true);
  RunResult inspect = RunAlpa({"inspect", JaxExample("alpa_mlp"), "--weights", "params"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_THAT(inspect.out, HasSubstr("2 layers from Alpa's 4 pipeline markers"));
}

TEST(CliImportTest, AJaxLossPlansInPipelineStagesFromItsOperators) {
  RunResult r = RunAlpa({"plan", JaxExample("jax_gpt"), "--weights", "params", "--cluster",
                         "local:4", "--auto-layers", "2", "--micro-batches", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["method"], "pipeshard") << json.dump(2);
}

// The plan artifacts of a zoo model, for an export: zero2 and a uniform hand plan, a pipelined
// plan document with its HTML report, which `alpa explain` reads and `--validate` re-costs.
TEST_F(AlpaCliTest, AnExportsPlansAreExplainedReportedAndValidated) {
  const std::string mlp = Example("mlp");
  RunResult zero2 =
      RunAlpa({"plan", mlp, "--cluster", "p3.16xlarge:1x8", "--method", "zero2", "--json"});
  ASSERT_EQ(zero2.exit_code, 0) << Describe(zero2);
  EXPECT_EQ(ParseJson(zero2)["method"], "zero2");
  RunResult uniform = RunAlpa({"plan", mlp, "--cluster", "p3.16xlarge:1x8", "--method", "uniform",
                               "--dp", "8", "--op", "1", "--pp", "1"});
  ASSERT_EQ(uniform.exit_code, 0) << Describe(uniform);
  const std::string plan = (dir_ / "plan.json").string();
  const std::string report = (dir_ / "plan.html").string();
  RunResult pipelined =
      RunAlpa({"plan", mlp, "--cluster", "p3.16xlarge:1x8", "--method", "pipeshard",
               "--auto-layers", "2", "--micro-batches", "2", "-o", plan, "--report", report});
  ASSERT_EQ(pipelined.exit_code, 0) << Describe(pipelined);
  EXPECT_TRUE(std::filesystem::exists(report));
  RunResult explained = RunAlpa({"explain", plan});
  ASSERT_EQ(explained.exit_code, 0) << Describe(explained);
  EXPECT_THAT(explained.out, HasSubstr("examples/import/mlp.onnx on p3.16xlarge:1x8"));
  RunResult validated =
      RunAlpa({"plan", mlp, "--cluster", "p3.16xlarge:1x8", "--method", "pipeshard",
               "--auto-layers", "2", "--micro-batches", "2", "--validate", plan});
  EXPECT_EQ(validated.exit_code, 0) << Describe(validated);
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

// The front end does not change the costs. Alpa's GPT exported from PyTorch at real sizes (8
// layers of gpt-125m's width, 97 M parameters; the graph is committed, and its weights file is
// made here as a sparse file of the size PyTorch wrote, since planning never reads it) plans on
// p3.16xlarge:1x8 as the zoo's gpt-125m with 8 layers does: the same parameters and forward FLOPs
// (PyTorch's counts), the same stages, the step time within 5%.
TEST_F(AlpaCliTest, AnExportedGptPlansAsTheZoosGptOfTheSameSize) {
  std::ifstream file(ExamplePath("import/alpa_gpt_8x768.expected.json"));
  ASSERT_TRUE(file);
  const nlohmann::json expected = nlohmann::json::parse(file);
  const std::filesystem::path model = dir_ / "alpa_gpt_8x768.onnx";
  std::filesystem::copy_file(ExamplePath("import/alpa_gpt_8x768.onnx"), model);
  const std::filesystem::path data = dir_ / expected["external_data"].get<std::string>();
  std::ofstream(data).close();
  std::filesystem::resize_file(data, expected["external_data_bytes"].get<uintmax_t>());

  RunResult inspected = RunAlpa({"inspect", model.string(), "--batch", "1", "--json"});
  ASSERT_EQ(inspected.exit_code, 0) << Describe(inspected);
  EXPECT_EQ(ParseJson(inspected)["parameters"], expected["parameters"]);
  EXPECT_EQ(ParseJson(inspected)["forward_flops_dot_conv"].get<double>(),
            expected["forward_flops"].get<double>());

  const std::vector<std::string> plan = {"plan",
                                         "--method",
                                         "pipeshard",
                                         "--auto-layers",
                                         "4",
                                         "--cluster",
                                         "p3.16xlarge:1x8",
                                         "--batch",
                                         "32",
                                         "--micro-batches",
                                         "8",
                                         "--optimizer",
                                         "adam",
                                         "--no-remat",
                                         "--json"};
  std::vector<std::string> onnx_args = plan;
  onnx_args.push_back(model.string());
  std::vector<std::string> zoo_args = plan;
  zoo_args.insert(zoo_args.end(), {"gpt-125m", "--layers", "8", "--dtype", "f32"});
  RunResult onnx = RunAlpa(onnx_args);
  ASSERT_EQ(onnx.exit_code, 0) << Describe(onnx);
  RunResult zoo = RunAlpa(zoo_args);
  ASSERT_EQ(zoo.exit_code, 0) << Describe(zoo);
  const nlohmann::json onnx_plan = ParseJson(onnx);
  const nlohmann::json zoo_plan = ParseJson(zoo);
  ASSERT_EQ(onnx_plan["stages"].size(), zoo_plan["stages"].size());
  for (size_t s = 0; s < zoo_plan["stages"].size(); ++s) {
    EXPECT_EQ(onnx_plan["stages"][s]["layers"], zoo_plan["stages"][s]["layers"]) << "stage " << s;
  }
  const double onnx_s = onnx_plan["estimate"]["step_time_s"].get<double>();
  const double zoo_s = zoo_plan["estimate"]["step_time_s"].get<double>();
  EXPECT_NEAR(onnx_s / zoo_s, 1.0, 0.05) << "ONNX " << onnx_s << " s, zoo " << zoo_s << " s";
  RecordProperty("onnx_over_zoo_step_time", std::to_string(onnx_s / zoo_s));
}

// A whole train step as PyTorch/XLA dumps it (forward, backward and SGD in one module): its
// input_output_alias and data flow say which parameters are weights and which the batch
// (api/dumped_train_step.h), so the data-parallel methods place them as they do ours: data
// replicates the weight and all-reduces (the gradients and the loss's sums), zero3 splits the
// weight over the devices and gathers it.
// A user's batches (testdata/arrays/make_arrays.py): GPT-2's ids and next-token labels as int64,
// the same in NumPy's .npz and in .safetensors, train alike and the loss falls on the same batch;
// float64 inputs of an MLP train under zero3 as the reference does.
TEST(CliImportTest, TrainsOnTheUsersBatches) {
  auto run = [](const std::string& model, const std::string& file, const std::string& method,
                std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "run",       model,     "--batch-file", TestdataPath("arrays/" + file),
        "--cluster", "local:2", "--method",     method,
        "--steps",   "4",       "--lr",         "0.01",
        "--check",   "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunAlpa(args);
  };
  RunResult npz = run(Example("gpt2"), "gpt2_batches.npz", "data", {});
  RunResult safetensors = run(Example("gpt2"), "gpt2_batches.safetensors", "data", {});
  ASSERT_EQ(npz.exit_code, 0) << Describe(npz);
  ASSERT_EQ(safetensors.exit_code, 0) << Describe(safetensors);
  const nlohmann::json npz_json = ParseJson(npz);
  EXPECT_EQ(npz_json["check"]["passed"], true);
  const nlohmann::json& steps = npz_json["steps"];
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i]["loss"], ParseJson(safetensors)["steps"][i]["loss"]) << "step " << i + 1;
  }
  EXPECT_LT(steps[2]["loss"].get<double>(), steps[0]["loss"].get<double>());  // the same batch

  RunResult mlp = run(Example("mlp"), "mlp_batches.npz", "zero3", {"--loss", "mse"});
  ASSERT_EQ(mlp.exit_code, 0) << Describe(mlp);
  EXPECT_EQ(ParseJson(mlp)["check"]["passed"], true);

  RunResult wrong =
      RunAlpa({"run", Example("gpt2"), "--batch-file", TestdataPath("arrays/mlp_batches.npz")});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("--batch-file: "));
  EXPECT_THAT(wrong.err, HasSubstr("array input (for parameter input) is f64[16,32]"));
}

TEST(CliImportTest, ADumpedTrainStepPlansWithTheDataParallelMethods) {
  auto plan = [](const std::string& method) {
    return RunAlpa({"plan", TestdataPath("hlo/ptxla_mlp_mini_train_single.hlo"), "--cluster",
                    "p3.16xlarge:1x4", "--method", method, "--json"});
  };
  RunResult data = plan("data");
  ASSERT_EQ(data.exit_code, 0) << Describe(data);
  const nlohmann::json data_plan = ParseJson(data);
  EXPECT_EQ(data_plan["shardings"]["p3.15"], "{replicated}");          // weight f32[10,784]
  EXPECT_EQ(data_plan["shardings"]["p4.24"], "{devices=[4,1]<=[4]}");  // batch f32[32,784]
  EXPECT_EQ(data_plan["shardings"]["p1.6"], "{devices=[4]<=[4]}");     // labels s64[32]
  EXPECT_GE(data_plan["estimate"]["comm"]["all-reduce"], 2);
  EXPECT_EQ(data_plan["estimate"]["comm"]["all-gather"], 0);

  RunResult zero3 = plan("zero3");
  ASSERT_EQ(zero3.exit_code, 0) << Describe(zero3);
  const nlohmann::json zero3_plan = ParseJson(zero3);
  EXPECT_EQ(zero3_plan["shardings"]["p3.15"], "{devices=[1,4]<=[4]}");  // 784 splits 4 ways
  EXPECT_GE(zero3_plan["estimate"]["comm"]["all-gather"], 1);

  // A forward graph updates nothing in place: the message says what is missing.
  ExpectBadInput(RunAlpa({"plan", TestdataPath("hlo/ptxla_linear1_fwd.hlo"), "--cluster",
                          "p3.16xlarge:1x4", "--method", "data"}),
                 "no parameter it updates in place is read by a dot");
}

// The dumped PyTorch/XLA step trains on four devices under data and zero3 as the reference
// interpreter does, its weights carried from step to step through input_output_alias. Its scalar
// is SGD's -lr (torch's p.add_(grad, alpha=-lr)); its loss, nll_loss on raw logits, falls without
// bound, and step 5 sees step 1's batch again.
TEST(CliImportTest, ADumpedTrainStepTrainsAsTheReferenceDoes) {
  const std::string step = TestdataPath("hlo/ptxla_mlp_mini_train_single.hlo");
  for (const std::string method : {"data", "zero3"}) {
    RunResult r = RunAlpa({"run", step, "--scalar", "p0.1=-0.1", "--cluster", "local:4", "--method",
                           method, "--steps", "5", "--check", "--json"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const nlohmann::json json = ParseJson(r);
    EXPECT_EQ(json["check"]["passed"], true) << json["check"].dump(2);
    ASSERT_EQ(json["steps"].size(), 5u);
    EXPECT_LT(json["steps"][4]["loss"].get<double>(), json["steps"][0]["loss"].get<double>());
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"run", step}, "scalar parameter p0.1 has no value"},
      {{"run", step, "--scalar", "p0.1=-0.1", "--scalar", "lr=1"},
       "--scalar lr=1: the module has no scalar parameter lr; its scalars: p0.1 (f32[], from "
       "sgd.py:263)"},
      {{"run", step, "--scalar", "p0.1"}, "--scalar p0.1: expected NAME=VALUE"},
      {{"run", step, "--scalar", "p0.1=-0.1", "--cluster", "local:2", "--method", "pipeshard"},
       "pipeshard needs layers"},
      {{"run", "mlp-tiny", "--scalar", "p0.1=-0.1"}, "--scalar is for a dumped train step"},
      {{"run", step, "--scalar", "p0.1=-0.1", "--lr", "0.1"},
       "--lr shape or train a model we build; a dumped train step is built already"},
  };
  for (const auto& [args, message] : refused) {
    RunResult r = RunAlpa(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr(message));
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
