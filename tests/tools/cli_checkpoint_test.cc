// `alpa run ... --checkpoint-dir D [--checkpoint-every N]` and `--resume D` (issue 35): a run saved
// after 4 steps on one plan resumes on another (another device count, method or mesh, or one
// device) and takes the uninterrupted run's next 4 steps; on the same plan, bit for bit. A
// checkpoint of another model, a damaged tile or a newer manifest is a named error that writes
// nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The losses of `alpa run MODEL FLAGS... --json`.
std::vector<double> Losses(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"run"};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--json");
  const RunResult r = RunAlpa(all);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  const nlohmann::json& steps = json.is_array() ? json : json["steps"];
  std::vector<double> losses;
  for (const nlohmann::json& step : steps) losses.push_back(step["loss"].get<double>());
  return losses;
}

class ResumeMatrixTest : public AlpaCliTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ResumeMatrixTest, AnyPlanContinuesTheRunItResumes) {
  const std::string model = GetParam();
  const std::vector<std::string> saving = {model, "--cluster", "local:4", "--mesh", "2x2"};
  auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const std::vector<double> uninterrupted = Losses(with(saving, {"--steps", "8"}));
  ASSERT_EQ(uninterrupted.size(), 8u);
  const std::string dir = (dir_ / "ckpt").string();
  const std::vector<double> first =
      Losses(with(saving, {"--steps", "4", "--checkpoint-dir", dir, "--checkpoint-every", "2"}));
  EXPECT_EQ(first, std::vector<double>(uninterrupted.begin(), uninterrupted.begin() + 4));
  EXPECT_EQ(ReadFile(fs::path(dir) / "LATEST"), "ckpt-000002-step-4\n");

  // The same plan: bit for bit.
  const std::vector<double> after = Losses(with(saving, {"--steps", "4", "--resume", dir}));
  EXPECT_EQ(after, std::vector<double>(uninterrupted.begin() + 4, uninterrupted.end()));
  // Other plans: the same steps up to the order of their sums.
  for (const std::vector<std::string>& plan :
       {std::vector<std::string>{"--cluster", "local:2", "--method", "data"},
        std::vector<std::string>{"--cluster", "local:4", "--mesh", "4x1"},
        std::vector<std::string>{"--cluster", "local:4", "--method", "zero3"},
        std::vector<std::string>{"--cluster", "local:1"}}) {
    SCOPED_TRACE(::testing::PrintToString(plan));
    const std::vector<double> resumed =
        Losses(with(with({model}, plan), {"--steps", "4", "--resume", dir}));
    ASSERT_EQ(resumed.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_NEAR(resumed[i], uninterrupted[4 + i], 1e-5 * std::abs(uninterrupted[4 + i]))
          << "step " << 5 + i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, ResumeMatrixTest,
                         ::testing::Values("gpt-tiny", "moe-tiny", "mlp-tiny"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "gpt-tiny"   ? std::string("GptTiny")
                                  : info.param == "moe-tiny" ? std::string("MoeTiny")
                                                             : std::string("MlpTiny");
                         });

// Every file under `dir`, with its contents.
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files[entry.path().string()] = ReadFile(entry.path());
  }
  return files;
}

TEST_F(AlpaCliTest, BadCheckpointsAreNamedAndNothingIsOverwritten) {
  const std::string dir = (dir_ / "ckpt").string();
  const RunResult saved =
      RunAlpa({"run", "mlp-tiny", "--cluster", "local:2", "--steps", "2", "--checkpoint-dir", dir});
  ASSERT_EQ(saved.exit_code, 0) << Describe(saved);
  const std::map<std::string, std::string> before = Snapshot(dir);

  // Another model's checkpoint, resumed into the same directory: named, and nothing written.
  const RunResult other = RunAlpa({"run", "gpt-tiny", "--cluster", "local:2", "--steps", "2",
                                   "--resume", dir, "--checkpoint-dir", dir});
  ExpectBadInput(other, "--resume");
  EXPECT_THAT(other.err, HasSubstr("a checkpoint of mlp-tiny (fingerprint "));
  EXPECT_THAT(other.err, HasSubstr("not of this run's gpt-tiny"));
  EXPECT_EQ(Snapshot(dir), before);

  // The same model with another optimizer carries other values: the first that differs is named.
  const RunResult sgd = RunAlpa({"run", "mlp-tiny", "--cluster", "local:2", "--steps", "1",
                                 "--optimizer", "sgd", "--resume", dir});
  ExpectBadInput(sgd, "--resume");
  EXPECT_THAT(sgd.err, HasSubstr("this run's is %"));

  const fs::path checkpoint = fs::path(dir) / "ckpt-000001-step-2";
  const std::string manifest = ReadFile(checkpoint / "manifest.json");
  std::string newer = manifest;
  newer.replace(newer.find("\"version\": 1"), 12, "\"version\": 9");
  WriteFile(checkpoint / "manifest.json", newer);
  const RunResult future = RunAlpa({"run", "mlp-tiny", "--cluster", "local:2", "--resume", dir});
  ExpectBadInput(future, "manifest.json");
  EXPECT_THAT(future.err, HasSubstr("version 9 was written by a newer alpa"));
  WriteFile(checkpoint / "manifest.json", manifest);

  {
    std::fstream tile(checkpoint / "device-0000.safetensors",
                      std::ios::in | std::ios::out | std::ios::binary);
    tile.seekg(-1, std::ios::end);
    const char byte = static_cast<char>(tile.get() ^ 0x01);
    tile.seekp(-1, std::ios::end);
    tile.put(byte);
  }
  const RunResult corrupted = RunAlpa({"run", "mlp-tiny", "--cluster", "local:2", "--resume", dir});
  ExpectBadInput(corrupted, "device-0000.safetensors");
  EXPECT_THAT(corrupted.err, HasSubstr("the manifest says"));
  EXPECT_THAT(corrupted.err, HasSubstr("the checkpoint is corrupted"));

  const RunResult none = RunAlpa({"run", "mlp-tiny", "--resume", (dir_ / "nothing").string()});
  ExpectBadInput(none, "no checkpoint here");
}

}  // namespace
}  // namespace alpa::tools::testing
