// End-to-end tests of the `alpa` program on good inputs: --version, --help, inspect (human, --json,
// --print, .gz) and eval (seeded random inputs, --inputs). Values are computed by hand for a tiny
// module so that a wrong count, FLOP rule or evaluation fails here, not only a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(AlpaCli, VersionPrintsTheProgramAndVersion) {
  RunResult r = RunAlpa({"--version"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, StartsWith("alpa "));
  EXPECT_THAT(r.out, HasSubstr(ALPA_VERSION));
  EXPECT_EQ(r.err, "");
}

TEST(AlpaCli, HelpListsTheCommands) {
  RunResult r = RunAlpa({"--help"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("inspect"));
  EXPECT_THAT(r.out, HasSubstr("eval"));
  EXPECT_THAT(r.out, HasSubstr("--version"));
  EXPECT_EQ(r.err, "");
}

TEST(AlpaCli, InspectHelpDescribesItsFlagsAndExitCodes) {
  RunResult r = RunAlpa({"inspect", "--help"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("MODEL"));
  EXPECT_THAT(r.out, HasSubstr("--json"));
  EXPECT_THAT(r.out, HasSubstr("--print"));
  EXPECT_THAT(r.out, HasSubstr("2 bad input"));
}

TEST(AlpaCli, EvalHelpDescribesItsFlagsAndExitCodes) {
  RunResult r = RunAlpa({"eval", "--help"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("MODEL"));
  EXPECT_THAT(r.out, HasSubstr("--seed"));
  EXPECT_THAT(r.out, HasSubstr("--inputs"));
  EXPECT_THAT(r.out, HasSubstr("2 bad input"));
}

TEST_F(AlpaCliTest, InspectJsonHasTheHandComputedNumbers) {
  RunResult r = RunAlpa({"inspect", "--json", Write("tiny.hlo", kTinyDot)});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  nlohmann::json json = ParseJson(r);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json["module"], "tiny_dot");
  EXPECT_EQ(json["instructions"], 3);
  EXPECT_EQ(json["opcodes"], (nlohmann::json{{"parameter", 2}, {"dot", 1}}));
  EXPECT_EQ(json["parameters"], 18);
  EXPECT_EQ(json["parameter_bytes"], 72);
  EXPECT_EQ(json["flops"].get<double>(), 48.0);
  EXPECT_EQ(json["flops_by_opcode"]["dot"].get<double>(), 48.0);
  EXPECT_EQ(json["peak_memory_bytes"], 104);
  EXPECT_EQ(json["entry"]["name"], "main");
  EXPECT_EQ(json["entry"]["result"], "f32[2,4]");
  ASSERT_EQ(json["entry"]["parameters"].size(), 2u);
  EXPECT_EQ(json["entry"]["parameters"][1]["shape"], "f32[3,4]");
  EXPECT_EQ(json["entry"]["parameters"][1]["bytes"], 48);
}

TEST_F(AlpaCliTest, InspectHumanReportStatesTheFacts) {
  RunResult r = RunAlpa({"inspect", Write("tiny.hlo", kTinyDot)});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("tiny_dot"));
  EXPECT_THAT(r.out, HasSubstr("instructions  3"));
  EXPECT_THAT(r.out, HasSubstr("parameters    2 (18 elements, 72 B)"));
  EXPECT_THAT(r.out, HasSubstr("48 FLOP"));
  EXPECT_THAT(r.out, HasSubstr("peak memory   104 B"));
  EXPECT_THAT(r.out, HasSubstr("result        f32[2,4]"));
  EXPECT_THAT(r.out, HasSubstr("%b"));  // the entry signature lists the parameters
  EXPECT_THAT(r.out, HasSubstr("f32[3,4]"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("dot +1 +48 FLOP"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("parameter +2"));
}

// The example training step: the human report and --json agree, and the counts are the file's own
// (the opcodes add up to the instruction count; dots carry FLOPs).
TEST(AlpaCli, InspectExampleTrainStep) {
  const std::string path = ExamplePath("mlp_train_step.hlo");
  RunResult json_run = RunAlpa({"inspect", "--json", path});
  ASSERT_EQ(json_run.exit_code, 0) << Describe(json_run);
  nlohmann::json json = ParseJson(json_run);
  ASSERT_TRUE(json.is_object());
  int64_t by_opcode = 0;
  for (const auto& [name, count] : json["opcodes"].items()) by_opcode += count.get<int64_t>();
  EXPECT_EQ(by_opcode, json["instructions"].get<int64_t>());
  EXPECT_GT(json["opcodes"]["dot"].get<int64_t>(), 0);
  EXPECT_GT(json["flops_by_opcode"]["dot"].get<double>(), 0);
  EXPECT_GT(json["parameters"].get<int64_t>(), 0);
  EXPECT_GE(json["peak_memory_bytes"].get<int64_t>(), json["parameter_bytes"].get<int64_t>());

  RunResult text = RunAlpa({"inspect", path});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out,
              HasSubstr("instructions  " + std::to_string(json["instructions"].get<int64_t>())));
  EXPECT_THAT(text.out, HasSubstr("entry parameters"));
  EXPECT_THAT(text.out, HasSubstr("instructions by opcode"));
}

// print(parse(x)) is a fixed point: printing what was printed gives the same text.
TEST_F(AlpaCliTest, InspectPrintReparsesToTheSameText) {
  for (const std::string& path : {Write("tiny.hlo", kTinyDot), ExamplePath("mlp_train_step.hlo"),
                                  TestdataPath("hlo/xla_test_fusion_import.hlo"),
                                  TestdataPath("hlo/xla_test_jax_shard_map.hlo"),
                                  TestdataPath("hlo/ptxla_spmd_linear_megatron.hlo")}) {
    SCOPED_TRACE(path);
    RunResult first = RunAlpa({"inspect", "--print", path});
    ASSERT_EQ(first.exit_code, 0) << Describe(first);
    EXPECT_THAT(first.out, StartsWith("HloModule "));
    EXPECT_EQ(first.err, "");
    RunResult second = RunAlpa({"inspect", "--print", Write("printed.hlo", first.out)});
    ASSERT_EQ(second.exit_code, 0) << Describe(second);
    EXPECT_EQ(second.out, first.out);
    // The printed module is the same module: same summary.
    RunResult original = RunAlpa({"inspect", "--json", path});
    RunResult reprinted = RunAlpa({"inspect", "--json", Write("printed.hlo", first.out)});
    nlohmann::json a = ParseJson(original);
    nlohmann::json b = ParseJson(reprinted);
    ASSERT_TRUE(a.is_object() && b.is_object());
    for (const char* key : {"instructions", "opcodes", "parameters", "parameter_bytes", "flops"}) {
      EXPECT_EQ(a[key], b[key]) << key;
    }
  }
}

TEST_F(AlpaCliTest, GzipInputReadsLikeThePlainFile) {
  const std::filesystem::path gz = dir_ / "tiny.hlo.gz";
  WriteGzipFile(gz, kTinyDot);
  RunResult compressed = RunAlpa({"inspect", "--json", gz.string()});
  ASSERT_EQ(compressed.exit_code, 0) << Describe(compressed);
  nlohmann::json json = ParseJson(compressed);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json["flops"].get<double>(), 48.0);
  EXPECT_EQ(json["instructions"], 3);

  RunResult printed = RunAlpa({"inspect", "--print", gz.string()});
  RunResult plain = RunAlpa({"inspect", "--print", Write("tiny.hlo", kTinyDot)});
  EXPECT_EQ(printed.exit_code, 0) << Describe(printed);
  EXPECT_EQ(printed.out, plain.out);
}

// File names are bytes on Linux, not necessarily UTF-8, and --json echoes the path: the output must
// still be valid JSON (invalid bytes replaced), not an exception from the JSON library.
TEST_F(AlpaCliTest, JsonOutputSurvivesANonUtf8Path) {
  const std::string path = Write("model_\xff\xfe.hlo", kTinyDot);
  for (const char* command : {"inspect", "eval"}) {
    SCOPED_TRACE(command);
    RunResult r = RunAlpa({command, "--json", path});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    nlohmann::json json = ParseJson(r);
    ASSERT_TRUE(json.is_object());
    EXPECT_EQ(json["module"], "tiny_dot");
    EXPECT_THAT(json["source"].get<std::string>(), HasSubstr("model_"));
  }
}

// The checksums of all outputs of `alpa eval --json`, without the timing.
nlohmann::json EvalOutputs(const std::vector<std::string>& args) {
  RunResult r = RunAlpa(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  nlohmann::json json = ParseJson(r);
  return json.is_object() ? json["outputs"] : nlohmann::json();
}

TEST(AlpaCli, EvalIsDeterministicPerSeed) {
  const std::string path = ExamplePath("mlp_train_step.hlo");
  nlohmann::json seed1 = EvalOutputs({"eval", "--json", "--seed", "1", path});
  nlohmann::json seed1_again = EvalOutputs({"eval", "--json", "--seed", "1", path});
  nlohmann::json seed2 = EvalOutputs({"eval", "--json", "--seed", "2", path});
  ASSERT_TRUE(seed1.is_array());
  ASSERT_FALSE(seed1.empty());
  EXPECT_EQ(seed1, seed1_again);
  EXPECT_NE(seed1, seed2);
  // Every output leaf gets a count that matches its shape and a 16-digit hash.
  for (const nlohmann::json& leaf : seed1) {
    EXPECT_GT(leaf["count"].get<int64_t>(), 0) << leaf;
    EXPECT_EQ(leaf["hash"].get<std::string>().size(), 16u) << leaf;
  }
}

TEST(AlpaCli, EvalHumanOutputListsShapesAndChecksums) {
  RunResult r = RunAlpa({"eval", "--seed", "3", TestdataPath("hlo/ptxla_linear1_fwd.hlo")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("random inputs, seed 3"));
  EXPECT_THAT(r.out, HasSubstr("shape"));
  EXPECT_THAT(r.out, HasSubstr("hash"));
  // The same seed prints the same table (the first line carries the run time, which varies).
  RunResult again = RunAlpa({"eval", "--seed", "3", TestdataPath("hlo/ptxla_linear1_fwd.hlo")});
  EXPECT_EQ(r.out.substr(r.out.find('\n')), again.out.substr(again.out.find('\n')));
}

TEST_F(AlpaCliTest, EvalWithInputsFileGivesTheHandComputedProduct) {
  // a = [[1,2,3],[4,5,6]], b = [[1,0,0,-1],[0,1,0,-1],[0,0,1,-1]] (b nested, to check flattening):
  // a.b = [[1,2,3,-6],[4,5,6,-15]]: each row sums to 0, so sum = 0 and abs_sum = 12 + 30 = 42.
  const std::string inputs = Write("inputs.json", R"({"arguments": [
    {"shape": "f32[2,3]", "values": [1, 2, 3, 4, 5, 6]},
    {"shape": "f32[3,4]", "values": [[1, 0, 0, -1], [0, 1, 0, -1], [0, 0, 1, -1]]}
  ]})");
  nlohmann::json outputs =
      EvalOutputs({"eval", "--json", "--inputs", inputs, Write("tiny.hlo", kTinyDot)});
  ASSERT_TRUE(outputs.is_array());
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0]["shape"], "f32[2,4]");
  EXPECT_EQ(outputs[0]["count"], 8);
  EXPECT_EQ(outputs[0]["sum"].get<double>(), 0.0);
  EXPECT_EQ(outputs[0]["abs_sum"].get<double>(), 42.0);

  // A different input changes the result: [[1,1,1],[0,0,0]].b = [[1,1,1,-3],[0,0,0,0]].
  const std::string other = Write("other.json", R"({"arguments": [
    {"shape": "f32[2,3]", "values": [[1, 1, 1], [0, 0, 0]]},
    {"shape": "f32[3,4]", "values": [1, 0, 0, -1, 0, 1, 0, -1, 0, 0, 1, -1]}
  ]})");
  nlohmann::json other_outputs =
      EvalOutputs({"eval", "--json", "--inputs", other, Write("tiny.hlo", kTinyDot)});
  ASSERT_EQ(other_outputs.size(), 1u);
  EXPECT_EQ(other_outputs[0]["sum"].get<double>(), 0.0);
  EXPECT_EQ(other_outputs[0]["abs_sum"].get<double>(), 6.0);
  EXPECT_NE(other_outputs[0]["hash"], outputs[0]["hash"]);
}

TEST_F(AlpaCliTest, EvalWithInputsFileHandlesTupleResultsAndIntegers) {
  // (x + y, x * y) over s32[3]: x = [1,2,3], y = [4,5,-6] -> ([5,7,-3], [4,10,-18]).
  const std::string model = Write("pair.hlo", R"(HloModule pair
ENTRY %main (x: s32[3], y: s32[3]) -> (s32[3], s32[3]) {
  %x = s32[3] parameter(0)
  %y = s32[3] parameter(1)
  %sum = s32[3] add(%x, %y)
  %product = s32[3] multiply(%x, %y)
  ROOT %t = (s32[3], s32[3]) tuple(%sum, %product)
}
)");
  const std::string inputs = Write("inputs.json", R"({"arguments": [
    {"shape": "s32[3]", "values": [1, 2, 3]}, {"shape": "s32[3]", "values": [4, 5, -6]}]})");
  nlohmann::json outputs = EvalOutputs({"eval", "--json", "--inputs", inputs, model});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0]["index"], nlohmann::json::array({0}));
  EXPECT_EQ(outputs[0]["sum"].get<double>(), 9.0);
  EXPECT_EQ(outputs[0]["abs_sum"].get<double>(), 15.0);
  EXPECT_EQ(outputs[1]["index"], nlohmann::json::array({1}));
  EXPECT_EQ(outputs[1]["sum"].get<double>(), -4.0);
  EXPECT_EQ(outputs[1]["abs_sum"].get<double>(), 32.0);
}

}  // namespace
}  // namespace alpa::tools::testing
