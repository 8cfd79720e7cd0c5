// `alpa profile`: a --quick run writes a well-formed profile (a spread per figure, collectives
// marked not measured) and prints the table; bad input exits 2. No timing is asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(AlpaCliTest, ProfileQuickWritesTheDatabase) {
  const std::string path = (dir_ / "prof.json").string();
  RunResult r = RunAlpa({"profile", "--cluster", "local:2", "-o", path, "--quick"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("profile     local:2 (2 device(s)"));
  EXPECT_THAT(r.out, HasSubstr("matmul f32 64^3"));
  EXPECT_THAT(r.out, HasSubstr("spread"));
  EXPECT_THAT(r.out, HasSubstr("collectives not measured: no communicator yet"));
  EXPECT_THAT(r.err, HasSubstr("[1/17] matmul f32 64^3: "));

  nlohmann::json json = nlohmann::json::parse(ReadFile(path));
  EXPECT_EQ(json["format"], "alpa-profile");
  EXPECT_EQ(json["version"], 1);
  EXPECT_EQ(json["cluster"], "local:2");
  EXPECT_EQ(json["machine"]["devices"], 2);
  ASSERT_EQ(json["measurements"].size(), 17u);
  for (const auto& m : json["measurements"]) {
    ASSERT_TRUE(m["spread"].is_number()) << m.dump();
    EXPECT_GE(m["spread"].get<double>(), 0) << m.dump();
    EXPECT_GT(m["median_s"].get<double>(), 0) << m.dump();
    EXPECT_EQ(m["runs"].size(), 3u) << m.dump();
    EXPECT_TRUE(m["flagged"].is_boolean()) << m.dump();
  }
  EXPECT_EQ(json["collectives"]["measured"], false);
  EXPECT_EQ(json["collectives"]["reason"], "not measured: no communicator yet");
  EXPECT_TRUE(json["derived"]["peak_flops"].is_object());

  RunResult quiet = RunAlpa(
      {"profile", "--cluster", "local:1", "-o", path, "--quick", "--quiet", "--repeats", "2"});
  ASSERT_EQ(quiet.exit_code, 0) << Describe(quiet);
  EXPECT_EQ(quiet.err, "");
  nlohmann::json again = nlohmann::json::parse(ReadFile(path));
  EXPECT_EQ(again["settings"]["repeats"], 2);
  EXPECT_EQ(again["measurements"][0]["runs"].size(), 2u);
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
      RunAlpa({"profile", "--cluster", "local:2", "-o", path, "--quick", "--repeats", "0"});
  EXPECT_EQ(repeats.exit_code, 2) << Describe(repeats);
}

}  // namespace
}  // namespace alpa::tools::testing
