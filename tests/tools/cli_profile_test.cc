// `alpa profile`: a --quick run writes a well-formed profile (a spread per figure, collectives
// measured with 2 devices and marked not measured with 1) and prints the table; bad input exits 2.
// No timing is asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(AlpaCliTest, ProfileQuickWritesTheDatabase) {
  const std::string path = (dir_ / "prof.json").string();
  RunResult r = RunAlpa({"profile", "--cluster", "local:2", "-o", path, "--quick"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("profile     local:2 (2 device(s)"));
  EXPECT_THAT(r.out, HasSubstr("matmul f32 64^3"));
  EXPECT_THAT(r.out, HasSubstr("spread"));
  EXPECT_THAT(r.out, HasSubstr("all-reduce f32 4 KiB x2"));
  // Which kinds have a fit depends on which figures a loaded machine flagged.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("collectives +([a-z-]+: latency |none)"));
  EXPECT_THAT(r.out, HasSubstr("median ±"));
  // 26 figures and, in the same rounds, the cores' round trip (CI machines have two cores).
  EXPECT_THAT(r.err, HasSubstr("preparing figures 1 to 10 of 27"));
  EXPECT_THAT(r.err, HasSubstr("round 3/3 of 27 figure(s): "));
  EXPECT_THAT(r.out, HasSubstr("us a kernel"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("kernel launch: ([0-9.]+ us|none)"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("cores +round trip between two cores: [0-9]+ ns"));

  nlohmann::json json = nlohmann::json::parse(ReadFile(path));
  EXPECT_EQ(json["format"], "alpa-profile");
  EXPECT_EQ(json["version"], 3);
  EXPECT_EQ(json["cluster"], "local:2");
  EXPECT_EQ(json["machine"]["devices"], 2);
  // One per round: 3, or 6 when its median was uncertain after the first pass.
  const size_t round_trips = json["machine"]["core_round_trip_s"].size();
  EXPECT_TRUE(round_trips == 3 || round_trips == 6) << round_trips;
  ASSERT_EQ(json["measurements"].size(), 26u);
  for (const auto& m : json["measurements"]) {
    ASSERT_TRUE(m["spread"].is_number()) << m.dump();
    EXPECT_GE(m["spread"].get<double>(), 0) << m.dump();
    EXPECT_GT(m["median_s"].get<double>(), 0) << m.dump();
    ASSERT_TRUE(m["uncertainty"].is_number()) << m.dump();
    EXPECT_EQ(m["runs"].size(), 3 * (1 + m["retries"].get<size_t>())) << m.dump();
    EXPECT_TRUE(m["flagged"].is_boolean()) << m.dump();
  }
  EXPECT_EQ(json["collectives"]["measured"], true);
  EXPECT_EQ(json["collectives"]["reason"], "");
  EXPECT_EQ(json["settings"]["placements"], 4);
  EXPECT_TRUE(json["derived"]["peak_flops"].is_object());
  // A kind has a fit exactly when both of its sizes (4 and 256 KiB) are unflagged.
  std::map<std::string, int> unflagged_sizes;
  for (const auto& m : json["measurements"]) {
    if (m["unit"] != "B" || m["kind"] == "elementwise") continue;
    unflagged_sizes[m["kind"].get<std::string>()] += m["flagged"] ? 0 : 1;
  }
  ASSERT_EQ(unflagged_sizes.size(), 4u);
  const nlohmann::json fits = json["derived"].value("collectives", nlohmann::json::object());
  for (const auto& [kind, count] : unflagged_sizes) {
    EXPECT_EQ(fits.contains(kind), count == 2) << kind;
  }

  RunResult quiet = RunAlpa(
      {"profile", "--cluster", "local:1", "-o", path, "--quick", "--quiet", "--repeats", "2"});
  ASSERT_EQ(quiet.exit_code, 0) << Describe(quiet);
  EXPECT_EQ(quiet.err, "");
  nlohmann::json again = nlohmann::json::parse(ReadFile(path));
  EXPECT_EQ(again["settings"]["repeats"], 2);
  EXPECT_EQ(again["settings"]["placements"], 4);
  EXPECT_EQ(again["measurements"][0]["runs"].size(),
            2 * (1 + again["measurements"][0]["retries"].get<size_t>()));
  EXPECT_EQ(again["collectives"]["reason"], "not measured: one device has no peer");
  EXPECT_THAT(quiet.out, HasSubstr("collectives not measured: one device has no peer"));
}

// `cluster show` and the planner take a profile's measured figures in place of the analytic
// ones, for a cluster of as many devices per host as were profiled. The profile is one of this
// kind of machine, taken once (testdata/profiles/README.md): a fresh measurement on a loaded
// machine may flag every figure, which is right for the profiler and useless for this test.
TEST_F(AlpaCliTest, ProfileReplacesTheAnalyticFigures) {
  const std::string profile = TestdataPath("profiles/local-2.json");
  RunResult shown = RunAlpa({"cluster", "show", "local:2", "--profile", profile, "--json"});
  ASSERT_EQ(shown.exit_code, 0) << Describe(shown);
  const nlohmann::json cluster = ParseJson(shown);
  const nlohmann::json derived = nlohmann::json::parse(ReadFile(profile))["derived"];
  EXPECT_EQ(cluster["note"], "figures: profiled (local:2)");
  EXPECT_EQ(cluster["device_types"]["cpu-core"]["peak_flops"]["f32"], derived["peak_flops"]["f32"]);
  EXPECT_EQ(cluster["device_types"]["cpu-core"]["memory_bandwidth"], derived["memory_bandwidth"]);
  // The ring all-reduce over P = 2 devices: alpha = latency / 2(P-1), b = 2(P-1)/P * bandwidth.
  const nlohmann::json& all_reduce = derived["collectives"]["all-reduce"];
  const nlohmann::json& link = cluster["hosts"][0]["intra_host"];
  EXPECT_DOUBLE_EQ(link["latency"].get<double>(), all_reduce["latency_s"].get<double>() / 2);
  EXPECT_DOUBLE_EQ(link["bandwidth"].get<double>(), all_reduce["bandwidth"].get<double>());
  // Every other kind with a fit would get figures of its own (the fixture fits the all-reduce
  // only; runtime_test's ApplyProfileReplacesAnalyticFigures covers the others).
  EXPECT_FALSE(link.contains("collectives"));

  RunResult planned = RunAlpa(
      {"plan", "mlp-tiny", "--cluster", "local:2", "--profile", profile, "--time-limit", "5"});
  EXPECT_EQ(planned.exit_code, 0) << Describe(planned);
  ExpectBadInput(RunAlpa({"cluster", "show", "local:4", "--profile", profile}),
                 "it measured local:2 as 2 devices, the cluster 'local:4' has 4 per host");
  ExpectBadInput(RunAlpa({"cluster", "show", "local:2", "--profile", dir_.string() + "/none"}),
                 "--profile");
}

// --compare prints what moved since an earlier profile of the same --cluster (which figures did
// depends on the machine's load, so only the report's shape is asserted).
TEST_F(AlpaCliTest, ProfileComparesWithAnEarlierOne) {
  const std::string earlier = TestdataPath("profiles/local-2.json");
  const std::string path = (dir_ / "prof.json").string();
  RunResult r = RunAlpa(
      {"profile", "--cluster", "local:2", "-o", path, "--quick", "--quiet", "--compare", earlier});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("compared    with " + earlier + ": "));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("[0-9]+ figures kept by both, [0-9]+ not compared"));
  EXPECT_THAT(r.out, HasSubstr("            largest difference: "));
  EXPECT_THAT(r.out, HasSubstr("            more than 10% apart: "));
  EXPECT_THAT(r.out, Not(HasSubstr("core round trip:")));  // the earlier one has none

  // Two profiles that both took the cores' round trip compare it too.
  RunResult again =
      RunAlpa({"profile", "--cluster", "local:2", "-o", (dir_ / "again.json").string(), "--quick",
               "--quiet", "--compare", path});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_THAT(again.out,
              ::testing::ContainsRegex("core round trip: [0-9]+ ns then, [0-9]+ ns now"));
}

TEST_F(AlpaCliTest, ProfileBadInput) {
  const std::string path = (dir_ / "prof.json").string();
  RunResult preset = RunAlpa({"profile", "--cluster", "p3.16xlarge:2", "-o", path, "--quick"});
  ExpectBadInput(preset, "profiling measures this machine; use local[:N]");
  EXPECT_FALSE(std::filesystem::exists(path));

  RunResult zero = RunAlpa({"profile", "--cluster", "local:0", "-o", path, "--quick"});
  ExpectBadInput(zero, "local:0");

  RunResult folder =
      RunAlpa({"profile", "--cluster", "local:2", "-o", "/nonexistent/dir/p.json", "--quick"});
  ExpectBadInput(folder, "/nonexistent/dir/p.json");

  RunResult directory =
      RunAlpa({"profile", "--cluster", "local:2", "-o", dir_.string(), "--quick"});
  ExpectBadInput(directory, dir_.string());

  RunResult no_output = RunAlpa({"profile", "--cluster", "local:2", "--quick"});
  EXPECT_EQ(no_output.exit_code, 2) << Describe(no_output);

  RunResult repeats =
      RunAlpa({"profile", "--cluster", "local:2", "-o", path, "--quick", "--repeats", "1"});
  EXPECT_EQ(repeats.exit_code, 2) << Describe(repeats);
  ExpectBadInput(
      RunAlpa({"profile", "--cluster", "local:2", "-o", path, "--quick", "--placements", "0"}),
      "--placements");

  // --compare is read before measuring: a missing file or one of another --cluster costs nothing.
  ExpectBadInput(RunAlpa({"profile", "--cluster", "local:2", "-o", path, "--quick", "--compare",
                          dir_.string() + "/none.json"}),
                 "--compare: " + dir_.string() + "/none.json");
  ExpectBadInput(RunAlpa({"profile", "--cluster", "local:4", "-o", path, "--quick", "--compare",
                          TestdataPath("profiles/local-2.json")}),
                 "it measured local:2 as 2 devices, this profile is of local:4");
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace alpa::tools::testing
