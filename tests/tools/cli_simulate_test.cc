// `alpa simulate`: the simulator's figures through the command line (GPipe and 1F1B on equal
// stages, a case where Alpa's closed formula is off), the trace and SVG files, the example pipeline
// file, and the bad-input contract for every malformed flag and file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// 2 stages x 4 micro-batches, f = 1, b = 2: (S + B - 1)(f + b) = 15 for GPipe and 1F1B; the
// devices are busy 4 x 3 = 12 of 15 s, a bubble of 0.2; the formula 2 x 3 + 3 x 3 = 15 is exact.
TEST_F(AlpaCliTest, SimulateEqualStagesGpipeAnd1f1b) {
  for (const char* schedule : {"gpipe", "1f1b"}) {
    RunResult r = RunAlpa({"simulate", "--stages", "1:2,1:2", "--micro-batches", "4", "--schedule",
                           schedule, "--json"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.err, "");
    nlohmann::json json = ParseJson(r);
    EXPECT_EQ(json["schedule"], schedule);
    EXPECT_EQ(json["num_devices"], 2);
    EXPECT_EQ(json["num_micro_batches"], 4);
    EXPECT_DOUBLE_EQ(json["step_time_s"].get<double>(), 15);
    EXPECT_NEAR(json["bubble_fraction"].get<double>(), 0.2, 1e-12);
    EXPECT_DOUBLE_EQ(json["critical_path_s"].get<double>(), 6);  // one micro-batch: 2 x (1 + 2)
    EXPECT_DOUBLE_EQ(json["alpa_formula_s"].get<double>(), 15);
    EXPECT_NEAR(json["alpa_formula_error"].get<double>(), 0, 1e-12);
    ASSERT_EQ(json["devices"].size(), 2u);
    EXPECT_DOUBLE_EQ(json["devices"][0]["busy_s"].get<double>(), 12);
  }
  // GPipe holds all 4 micro-batches on each device; 1F1B at most S - s.
  RunResult gpipe = RunAlpa({"simulate", "--stages", "1:2,1:2", "--micro-batches", "4",
                             "--schedule", "gpipe", "--activation-bytes", "1KiB", "--json"});
  ASSERT_EQ(gpipe.exit_code, 0) << Describe(gpipe);
  EXPECT_EQ(ParseJson(gpipe)["peak_in_flight"], 4);
  EXPECT_EQ(ParseJson(gpipe)["peak_bytes"], 4096);
  RunResult ofob = RunAlpa({"simulate", "--stages", "1:2,1:2", "--micro-batches", "4",
                            "--static-bytes", "100,200", "--activation-bytes", "1KiB", "--json"});
  ASSERT_EQ(ofob.exit_code, 0) << Describe(ofob);
  nlohmann::json json = ParseJson(ofob);
  EXPECT_EQ(json["schedule"], "1f1b");  // the default
  EXPECT_EQ(json["devices"][0]["peak_in_flight"], 2);
  EXPECT_EQ(json["devices"][1]["peak_in_flight"], 1);
  EXPECT_EQ(json["devices"][1]["peak_bytes"], 200 + 1024);
}

TEST_F(AlpaCliTest, SimulateTextReport) {
  RunResult r =
      RunAlpa({"simulate", "--stages", "1:2,1:2", "--micro-batches", "4", "--schedule", "gpipe"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("4 micro-batches through 2 stages on 2 devices, gpipe"));
  EXPECT_THAT(r.out, HasSubstr("step time      15.0 s"));
  EXPECT_THAT(r.out, HasSubstr("bubble         20.0%"));
  EXPECT_THAT(r.out, HasSubstr("equal to the simulation"));
  EXPECT_THAT(r.out, HasSubstr("peak in flight"));
}

// Alpa's formula is too high for 1F1B with unequal stages and B < S (alpa_formula.h).
TEST_F(AlpaCliTest, SimulateReportsWhereAlpasFormulaIsOff) {
  RunResult r =
      RunAlpa({"simulate", "--stages", "2:4,1:2,1:2,1:2", "--micro-batches", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  nlohmann::json json = ParseJson(r);
  EXPECT_DOUBLE_EQ(json["step_time_s"].get<double>(), 19);
  EXPECT_DOUBLE_EQ(json["alpa_formula_s"].get<double>(), 21);
  EXPECT_NEAR(json["alpa_formula_error"].get<double>(), 2.0 / 19, 1e-12);

  RunResult text = RunAlpa({"simulate", "--stages", "2:4,1:2,1:2,1:2", "--micro-batches", "2"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("+2.00 s (+10.5%) vs the simulation"));

  // Transfers make the formula too low: 2x4, f = 1, b = 2, 0.5 s each way: 1F1B 17 (formula 15);
  // "500ms" is the same as 0.5.
  RunResult transfer = RunAlpa({"simulate", "--stages", "1:2,1s:2s", "--micro-batches", "4",
                                "--transfer", "500ms", "--json"});
  ASSERT_EQ(transfer.exit_code, 0) << Describe(transfer);
  EXPECT_DOUBLE_EQ(ParseJson(transfer)["step_time_s"].get<double>(), 17);
  EXPECT_DOUBLE_EQ(ParseJson(transfer)["alpa_formula_s"].get<double>(), 15);
}

TEST_F(AlpaCliTest, SimulateInterleaved) {
  RunResult r = RunAlpa({"simulate", "--stages", "1:2,1:2,1:2,1:2", "--micro-batches", "4",
                         "--schedule", "interleaved-1f1b", "--chunks", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["num_devices"], 2);
  EXPECT_EQ(json["num_chunks"], 2);
  EXPECT_EQ(json["devices"][0]["stages"], nlohmann::json::array({0, 2}));
  EXPECT_GT(json["step_time_s"].get<double>(), 0);
}

TEST_F(AlpaCliTest, SimulateWritesTraceAndSvg) {
  const std::string trace = (dir_ / "step.json").string();
  const std::string svg = (dir_ / "step.svg").string();
  RunResult r = RunAlpa(
      {"simulate", "--stages", "1:2,1:2", "--micro-batches", "4", "--trace", trace, "--svg", svg});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("trace          " + trace));
  EXPECT_THAT(r.out, HasSubstr("svg            " + svg));
  nlohmann::json events = nlohmann::json::parse(ReadFile(trace), nullptr, false);
  ASSERT_FALSE(events.is_discarded()) << ReadFile(trace);
  int complete = 0;
  for (const nlohmann::json& event : events["traceEvents"]) complete += event["ph"] == "X";
  EXPECT_EQ(complete, 2 * 2 * 4);  // a forward and a backward per device and micro-batch
  const std::string chart = ReadFile(svg);
  EXPECT_THAT(chart, StartsWith("<svg"));
  EXPECT_THAT(chart, HasSubstr("</svg>"));

  RunResult json =
      RunAlpa({"simulate", "--stages", "1:2,1:2", "--micro-batches", "4", "--json", "--svg", svg});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  EXPECT_EQ(ParseJson(json)["svg_file"], svg);
}

TEST_F(AlpaCliTest, SimulateExampleSpec) {
  RunResult r =
      RunAlpa({"simulate", "--spec", ExamplePath("pipelines/gpt-4-stages.json"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["num_devices"], 4);
  EXPECT_EQ(json["num_micro_batches"], 8);
  EXPECT_GT(json["step_time_s"].get<double>(), json["critical_path_s"].get<double>());
  EXPECT_GT(json["peak_bytes"].get<int64_t>(), int64_t{7516192768});

  // The file and the flags describe the same pipeline the same way.
  const std::string spec = Write("p.json", R"({"stages": [{"forward_s": 2, "backward_s": 4},
    {"forward_s": 1, "backward_s": 2}, {"forward_s": 1, "backward_s": 2},
    {"forward_s": 1, "backward_s": 2}], "micro_batches": 2})");
  RunResult file = RunAlpa({"simulate", "--spec", spec});
  RunResult flags = RunAlpa({"simulate", "--stages", "2:4,1:2,1:2,1:2", "--micro-batches", "2"});
  ASSERT_EQ(file.exit_code, 0) << Describe(file);
  EXPECT_EQ(file.out, flags.out);
}

TEST_F(AlpaCliTest, SimulateBadFlags) {
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> all = {"simulate"};
    all.insert(all.end(), args.begin(), args.end());
    return RunAlpa(all);
  };
  ExpectBadInput(with({"--stages", "1:2,1", "--micro-batches", "4"}),
                 "--stages: stage 1 is '1', not FORWARD:BACKWARD");
  ExpectBadInput(with({"--stages", "1:x", "--micro-batches", "4"}),
                 "--stages: stage 0 backward: 'x' is not a time");
  ExpectBadInput(with({"--stages", "1:2,,1:2"}), "--stages: stage 1 is ''");
  ExpectBadInput(with({"--stages", "1:-2", "--micro-batches", "4"}),
                 "--stages: stage 0 backward: -2 is negative");
  ExpectBadInput(with({"--stages", "1:2", "--micro-batches", "0"}),
                 "--micro-batches 0: must be at least 1");
  ExpectBadInput(with({"--stages", "1:2", "--micro-batches", "-3"}),
                 "--micro-batches -3: must be at least 1");
  RunResult schedule = with({"--stages", "1:2", "--schedule", "zigzag"});
  ExpectBadInput(schedule, "--schedule: unknown pipeline schedule 'zigzag'");
  for (const char* name : {"gpipe", "1f1b", "interleaved-1f1b"}) {
    EXPECT_THAT(schedule.err, HasSubstr(name));
  }
  ExpectBadInput(with({"--stages", "1:2,1:2,1:2,1:2", "--micro-batches", "3", "--schedule",
                       "interleaved-1f1b", "--chunks", "2"}),
                 "--micro-batches 3: interleaved-1f1b with 2 chunks needs a multiple of the 2 "
                 "devices");
  ExpectBadInput(with({"--stages", "1:2,1:2,1:2", "--chunks", "2", "--schedule", "interleaved"}),
                 "--chunks 2: must be >= 1 and divide the 3 stages");
  ExpectBadInput(with({"--stages", "1:2,1:2", "--chunks", "2"}),
                 "--chunks 2: model chunks need the interleaved-1f1b schedule, not 1f1b");
  ExpectBadInput(with({"--stages", "1:2,1:2", "--transfer", "-1"}), "--transfer: -1 is negative");
  ExpectBadInput(with({"--stages", "1:2,1:2", "--transfer", "fast"}),
                 "--transfer: 'fast' is not a time");
  ExpectBadInput(with({"--stages", "1:2,1:2,1:2", "--activation-bytes", "1,2"}),
                 "--activation-bytes: 2 values for 3 stages");
  ExpectBadInput(with({"--stages", "1:2", "--static-bytes", "-5"}),
                 "--static-bytes: -5 is negative");
  ExpectBadInput(with({"--stages", "1:2", "--static-bytes", "lots"}),
                 "--static-bytes: 'lots' is not a byte count");
  ExpectBadInput(with({"--micro-batches", "4"}),
                 "--stages F:B,... (with --micro-batches) or --spec");
  ExpectBadInput(with({"--stages", "1:2", "--micro-batches", "four"}), "--micro-batches");
  ExpectBadInput(with({"--spec", "x.json", "--stages", "1:2"}), "--spec");
  ExpectBadInput(with({"--stages", "1:2", "--svg", (dir_ / "no" / "such" / "dir.svg").string()}),
                 "--svg " + (dir_ / "no" / "such" / "dir.svg").string() + ": cannot write");
  ExpectBadInput(with({"--stages", "1:2", "--trace", dir_.string()}), "--trace " + dir_.string());
}

TEST_F(AlpaCliTest, SimulateBadSpecFile) {
  const std::string missing = (dir_ / "missing.json").string();
  ExpectBadInput(RunAlpa({"simulate", "--spec", missing}), missing);
  const std::string syntax = Write("broken.json", "{\n  \"stages\": [,\n}\n");
  ExpectBadInput(RunAlpa({"simulate", "--spec", syntax}), syntax + ":2:14: malformed JSON: ");

  struct Case {
    std::string text;
    std::string place;
  };
  const std::vector<Case> cases = {
      {R"({"stages": [{"forward_s": 1, "backward_s": 2}]})", "missing key 'micro_batches'"},
      {R"({"micro_batches": 2})", "missing key 'stages'"},
      {R"({"stages": [], "micro_batches": 2})", "stages: must be a non-empty list"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2}, {"forward_s": 1, "backward_s": "2"}],
          "micro_batches": 2})",
       "stages[1].backward_s: must be a number of seconds, found string"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2}, {"forward_s": -1, "backward_s": 2}],
          "micro_batches": 2})",
       "stages[1].forward_s: -1 is negative"},
      {R"({"stages": [{"forward_s": 1}], "micro_batches": 2})",
       "stages[0]: missing key 'backward_s'"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2, "flops": 3}], "micro_batches": 2})",
       "stages[0].flops: unknown key"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2, "activation_bytes": -1}],
          "micro_batches": 2})",
       "stages[0].activation_bytes: -1 is negative"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2}], "micro_batches": 0})",
       "micro_batches: 0 is out of range"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2}], "micro_batches": 2,
          "schedule": "zigzag"})",
       "schedule: unknown pipeline schedule 'zigzag': use gpipe, 1f1b or interleaved-1f1b"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2}, {"forward_s": 1, "backward_s": 2}],
          "micro_batches": 2, "forward_transfer_s": [1, 2]})",
       "forward_transfer_s: has 2 entries; it needs 1"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2}, {"forward_s": 1, "backward_s": 2},
          {"forward_s": 1, "backward_s": 2}, {"forward_s": 1, "backward_s": 2}],
          "micro_batches": 3, "schedule": "interleaved-1f1b", "chunks": 2})",
       "micro_batches: 3: interleaved-1f1b with 2 chunks needs a multiple of the 2 devices"},
      {R"({"stages": [{"forward_s": 1, "backward_s": 2, "forward_per_micro_batch_s": [1]}],
          "micro_batches": 2})",
       "stages[0].forward_per_micro_batch_s: has 1 entries; it needs 2"},
      {R"([1, 2])", "the pipeline: must be an object, found array"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = Write("case" + std::to_string(i) + ".json", cases[i].text);
    ExpectBadInput(RunAlpa({"simulate", "--spec", path}), path + ": " + cases[i].place);
  }
}

TEST_F(AlpaCliTest, SimulateHelp) {
  RunResult r = RunAlpa({"--help"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("Simulate one training step of a pipeline: step time, bubbles, "
                               "memory; Chrome trace and SVG timeline"));
  RunResult help = RunAlpa({"simulate", "--help"});
  ASSERT_EQ(help.exit_code, 0) << Describe(help);
  for (const char* flag : {"--stages", "--micro-batches", "--schedule", "--chunks", "--transfer",
                           "--spec", "--json", "--trace", "--svg"}) {
    EXPECT_THAT(help.out, HasSubstr(flag));
  }
}

}  // namespace
}  // namespace alpa::tools::testing
