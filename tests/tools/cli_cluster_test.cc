// `alpa cluster show`: presets, the --json round trip, and the bad-input contract for unknown
// presets, malformed files and zero devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(AlpaCliTest, ClusterShowPreset) {
  RunResult r = RunAlpa({"cluster", "show", "p3.16xlarge:2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("cluster     p3.16xlarge:2"));
  EXPECT_THAT(r.out, HasSubstr("devices     16 (2 hosts x 8 V100-SXM2-16GB)"));
  EXPECT_THAT(r.out, HasSubstr("memory      256 GiB in all"));
  EXPECT_THAT(r.out, HasSubstr("f32 251.2 TFLOP/s"));  // 16 x 15.7 TFLOP/s
  EXPECT_THAT(r.out, HasSubstr("3.125 GB/s (25 Gbit/s) per host"));
  EXPECT_THAT(r.out, HasSubstr("cube_mesh"));
  EXPECT_THAT(r.out, HasSubstr("125 TFLOP/s"));
  EXPECT_THAT(r.out, HasSubstr("900 GB/s"));
  EXPECT_THAT(r.out, HasSubstr("sub-meshes  (1,1) (1,2) (1,4) (1,8) (2,8)"));

  RunResult local = RunAlpa({"cluster", "show", "local:2"});
  ASSERT_EQ(local.exit_code, 0) << Describe(local);
  EXPECT_THAT(local.out, HasSubstr("figures: estimated, not profiled"));
  EXPECT_THAT(local.out, HasSubstr("devices     2 (1 host x 2 cpu-core)"));
}

TEST_F(AlpaCliTest, ClusterShowJsonRoundTrips) {
  RunResult json = RunAlpa({"cluster", "show", "p3.16xlarge:2", "--json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  nlohmann::json parsed = ParseJson(json);
  EXPECT_EQ(parsed["hosts"][0]["count"], 2);
  EXPECT_EQ(parsed["hosts"][0]["devices"], 8);
  EXPECT_EQ(parsed["inter_host"]["bandwidth"], 3.125e9);
  EXPECT_EQ(parsed["device_types"]["V100-SXM2-16GB"]["memory_bytes"], int64_t{16} << 30);

  const std::string path = Write("c.json", json.out);
  RunResult again = RunAlpa({"cluster", "show", path, "--json"});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_EQ(again.out, json.out);
  RunResult text_a = RunAlpa({"cluster", "show", "p3.16xlarge:2"});
  RunResult text_b = RunAlpa({"cluster", "show", path});
  ASSERT_EQ(text_b.exit_code, 0) << Describe(text_b);
  EXPECT_EQ(text_a.out, text_b.out);
}

// A link's figures of its own for some collectives (what --profile sets) are listed under the
// hosts, and none are when no link has any.
TEST_F(AlpaCliTest, ClusterShowListsALinksFiguresPerCollective) {
  RunResult json = RunAlpa({"cluster", "show", "local:2", "--json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  EXPECT_THAT(RunAlpa({"cluster", "show", "local:2"}).out,
              ::testing::Not(HasSubstr("figures of their own")));
  nlohmann::json cluster = ParseJson(json);
  cluster["hosts"][0]["intra_host"]["collectives"]["all-gather"] = {{"bandwidth", 2.5e10},
                                                                    {"latency", 4e-6}};
  const std::string path = Write("c.json", cluster.dump());
  RunResult r = RunAlpa({"cluster", "show", path});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("intra-host figures of their own (the other collectives see the "
                               "link's):"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("0 +all-gather +25 GB/s per device +4.00 us"));
}

TEST_F(AlpaCliTest, ClusterShowHeterogeneousExample) {
  RunResult r = RunAlpa({"cluster", "show", ExamplePath("clusters/heterogeneous.json")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("devices     28 on 4 hosts (heterogeneous)"));
  EXPECT_THAT(r.out, HasSubstr("racks       2 of 2 hosts"));
  EXPECT_THAT(r.out, HasSubstr("A100-SXM4-40GB"));
}

TEST_F(AlpaCliTest, ClusterShowUnknownPresetListsThePresets) {
  RunResult r = RunAlpa({"cluster", "show", "p5.48xlarge:2"});
  ExpectBadInput(r, "unknown cluster preset 'p5.48xlarge'");
  for (const char* name : {"p3.16xlarge", "v100-32gb", "p4d.24xlarge", "dgx-h100", "local"}) {
    EXPECT_THAT(r.err, HasSubstr(name));
  }
}

TEST_F(AlpaCliTest, ClusterShowMalformedFileNamesThePlace) {
  const std::string syntax = Write("broken.json", "{\n  \"hosts\": [,\n}\n");
  ExpectBadInput(RunAlpa({"cluster", "show", syntax}), syntax + ":2:13: malformed JSON: ");

  RunResult json = RunAlpa({"cluster", "show", "v100-32gb:2", "--json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  std::string text = json.out;
  const std::string from = "\"devices\": 8";
  ASSERT_NE(text.find(from), std::string::npos) << text;
  text.replace(text.find(from), from.size(), "\"devices\": 0");
  const std::string zero = Write("zero.json", text);
  ExpectBadInput(RunAlpa({"cluster", "show", zero}),
                 zero + ": hosts[0].devices: must be at least 1, found 0");

  ExpectBadInput(RunAlpa({"cluster", "show", dir_.string() + "/missing.json"}), "missing.json");
}

TEST_F(AlpaCliTest, ClusterShowZeroDevicesAndBadShapes) {
  ExpectBadInput(RunAlpa({"cluster", "show", "p3.16xlarge:0"}),
                 "p3.16xlarge:0: the number of hosts must be at least 1");
  ExpectBadInput(RunAlpa({"cluster", "show", "local:0"}), "local:0");
  ExpectBadInput(RunAlpa({"cluster", "show", "v100-32gb:1x0"}), "v100-32gb:1x0");
  ExpectBadInput(RunAlpa({"cluster", "show", "v100-32gb:1x16"}), "at most 8");
  ExpectBadInput(RunAlpa({"cluster", "show", "p3.16xlarge:two"}), "p3.16xlarge:two");
}

TEST_F(AlpaCliTest, ClusterCommandLineErrors) {
  RunResult none = RunAlpa({"cluster"});
  EXPECT_EQ(none.exit_code, 2) << Describe(none);
  EXPECT_EQ(none.out, "");
  EXPECT_THAT(none.err, HasSubstr("alpa: error: "));
  RunResult missing = RunAlpa({"cluster", "show"});
  EXPECT_EQ(missing.exit_code, 2) << Describe(missing);
  EXPECT_THAT(missing.err, HasSubstr("alpa cluster show --help"));
  RunResult help = RunAlpa({"cluster", "show", "--help"});
  EXPECT_EQ(help.exit_code, 0) << Describe(help);
  EXPECT_THAT(help.out, HasSubstr("p4d.24xlarge"));
  EXPECT_THAT(help.out, HasSubstr("--json"));
}

}  // namespace
}  // namespace alpa::tools::testing
