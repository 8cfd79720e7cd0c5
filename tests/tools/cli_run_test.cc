// `alpa run NAME --steps N`: zoo models train in the interpreter on synthetic data with a
// learnable pattern, so the loss falls; the seed makes a run reproducible.
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

// The losses of `alpa run args... --json`, checking the list's shape on the way.
std::vector<double> RunLosses(std::vector<std::string> args, size_t steps) {
  args.insert(args.begin(), "run");
  args.push_back("--json");
  RunResult r = RunAlpa(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "") << Describe(r);
  nlohmann::json json = ParseJson(r);
  std::vector<double> losses;
  if (!json.is_array()) return losses;
  EXPECT_EQ(json.size(), steps);
  for (size_t i = 0; i < json.size(); ++i) {
    EXPECT_EQ(json[i]["step"], i + 1);
    EXPECT_GE(json[i]["time_s"].get<double>(), 0.0);
    losses.push_back(json[i]["loss"].get<double>());
    EXPECT_TRUE(std::isfinite(losses.back()));
  }
  return losses;
}

double Mean(const std::vector<double>& values, size_t begin, size_t end) {
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += values[i];
  return sum / static_cast<double>(end - begin);
}

// The bar: over 50 steps the mean loss of the last 5 is below 70% of the first 5's.
void ExpectLearns(const std::string& model) {
  const std::vector<double> losses = RunLosses({model, "--steps", "50"}, 50);
  ASSERT_EQ(losses.size(), 50u);
  const double first = Mean(losses, 0, 5);
  const double last = Mean(losses, 45, 50);
  EXPECT_LT(last, 0.7 * first) << model << ": first 5 steps' mean " << first
                               << ", last 5 steps' mean " << last;
}

TEST(CliRunTest, GptTinyLearns) { ExpectLearns("gpt-tiny"); }
TEST(CliRunTest, MlpTinyLearns) { ExpectLearns("mlp-tiny"); }
TEST(CliRunTest, BertTinyLearns) { ExpectLearns("bert-tiny"); }
TEST(CliRunTest, MoeTinyLearns) { ExpectLearns("moe-tiny"); }
TEST(CliRunTest, LlamaTinyLearns) { ExpectLearns("llama-tiny"); }
TEST(CliRunTest, MixtralTinyLearns) { ExpectLearns("mixtral-tiny"); }
TEST(CliRunTest, WResNetTinyLearns) { ExpectLearns("wresnet-tiny"); }

TEST(CliRunTest, TheSeedMakesARunReproducible) {
  const std::vector<double> a = RunLosses({"gpt-tiny", "--steps", "4", "--seed", "7"}, 4);
  const std::vector<double> b = RunLosses({"gpt-tiny", "--steps", "4", "--seed", "7"}, 4);
  const std::vector<double> c = RunLosses({"gpt-tiny", "--steps", "4", "--seed", "8"}, 4);
  EXPECT_EQ(a, b);
  ASSERT_EQ(c.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NE(a[i], c[i]) << "step " << i + 1;
}

TEST(CliRunTest, MicroBatchesTrainOnTheSameExamples) {
  // The batch of a step is the global batch, stacked micro-batches: the step's loss is the mean
  // over the same 8 examples either way, up to rounding.
  const std::vector<double> whole = RunLosses({"gpt-tiny", "--steps", "3"}, 3);
  const std::vector<double> split =
      RunLosses({"gpt-tiny", "--steps", "3", "--micro-batches", "2"}, 3);
  ASSERT_EQ(whole.size(), 3u);
  ASSERT_EQ(split.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(split[i], whole[i], 1e-4 * whole[i]) << i;
}

TEST(CliRunTest, HumanOutputIsATableOfSteps) {
  RunResult r = RunAlpa({"run", "mlp-tiny", "--steps", "3", "--seed", "2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("training mlp-tiny (MLP tiny"));
  EXPECT_THAT(r.out, HasSubstr("seed 2"));
  EXPECT_THAT(r.out, HasSubstr("config   batch 16, f32, adam lr 0.01, no remat; 1732 weights"));
  EXPECT_THAT(r.out, HasSubstr("  step          loss       time\n"));
  EXPECT_THAT(r.out, HasSubstr("\n     1  "));
  EXPECT_THAT(r.out, HasSubstr("\n     3  "));
  EXPECT_THAT(r.out, HasSubstr("in 3 steps"));
}

}  // namespace
}  // namespace alpa::tools::testing
