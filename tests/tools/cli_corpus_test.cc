// `alpa inspect --json` over the whole shared HLO corpus (/work/shared/hlo-corpus), when present:
// every real dump loads and is summarized, and the files known to be broken fail cleanly (exit 2,
// file:line:col) rather than crash or print a partial summary; and its whole train steps plan
// with the data-parallel methods.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

namespace fs = std::filesystem;

// The corpus files that must not load: those MANIFEST.json marks malformed, plus the corpus files
// vendored into testdata/hlo/invalid/ (a fragment cut before its closing brace, an entry
// computation whose called computations were not dumped; the manifest calls them edge cases, not
// malformed).
std::set<std::string> ExpectedFailures(const fs::path& corpus) {
  std::set<std::string> failures;
  nlohmann::json manifest = nlohmann::json::parse(ReadFile(corpus / "MANIFEST.json"), nullptr,
                                                  /*allow_exceptions=*/false);
  EXPECT_TRUE(manifest.is_array()) << "MANIFEST.json is not a JSON array";
  if (manifest.is_array()) {
    for (const nlohmann::json& entry : manifest) {
      if (entry.value("form", "") == "malformed") failures.insert(entry.value("file", ""));
    }
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(TestdataPath("hlo/invalid"))) {
    failures.insert(entry.path().filename().string());
  }
  return failures;
}

TEST(AlpaCliCorpus, InspectJsonOnEveryCorpusFile) {
  const fs::path corpus = fs::path(ALPA_SHARED_DIR) / "hlo-corpus";
  if (!fs::exists(corpus / "MANIFEST.json")) GTEST_SKIP() << corpus << " not present";
  const std::set<std::string> failures = ExpectedFailures(corpus);
  ASSERT_GE(failures.size(), 3u) << "the manifest lost its malformed entries";

  int loaded = 0;
  int rejected = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(corpus)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".hlo") continue;
    const std::string relative = fs::relative(entry.path(), corpus).string();
    const std::string path = entry.path().string();
    SCOPED_TRACE(relative);
    const RunResult r = RunAlpa({"inspect", "--json", path});
    if (failures.count(relative) != 0 || failures.count(entry.path().filename().string()) != 0) {
      ++rejected;
      ExpectBadInput(r, path + ":");
      // The place is a line:col in that file.
      EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: "))) << Describe(r);
      continue;
    }
    ++loaded;
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.err, "");
    nlohmann::json json = ParseJson(r);
    ASSERT_TRUE(json.is_object());
    EXPECT_GT(json["instructions"].get<int64_t>(), 0);
    EXPECT_TRUE(json["opcodes"].is_object());
    EXPECT_GE(json["parameters"].get<int64_t>(), 0);
    EXPECT_GE(json["parameter_bytes"].get<int64_t>(), 0);
    EXPECT_GE(json["flops"].get<double>(), 0);
    int64_t by_opcode = 0;
    for (const auto& [name, count] : json["opcodes"].items()) by_opcode += count.get<int64_t>();
    EXPECT_EQ(by_opcode, json["instructions"].get<int64_t>());
  }
  EXPECT_GE(loaded, 40) << "the corpus should hold about 43 loadable modules";
  EXPECT_GE(rejected, 3) << "the three known-broken files were not all found";
}

// The corpus's whole train steps (forward, backward and update dumped as one module by
// PyTorch/XLA) plan with the data-parallel methods, their weights read from input_output_alias
// (api/dumped_train_step.h): data all-reduces, zero3 gathers the split weights.
TEST(AlpaCliCorpus, WholeTrainStepsPlanWithTheDataParallelMethods) {
  const fs::path corpus = fs::path(ALPA_SHARED_DIR) / "hlo-corpus";
  if (!fs::exists(corpus / "MANIFEST.json")) GTEST_SKIP() << corpus << " not present";
  for (const std::string name :
       {"ptxla_mlp_mini_train_single", "ptxla_mlp_train_single", "ptxla_mlp_train_single_case2",
        "ptxla_bert_large_train_step_single"}) {
    for (const std::string method : {"data", "zero3"}) {
      SCOPED_TRACE(name + " " + method);
      // The BERT step computes in bf16, which an H100 has a peak for.
      const RunResult r = RunAlpa({"plan", (corpus / (name + ".hlo")).string(), "--cluster",
                                   "dgx-h100:1x8", "--method", method, "--json"});
      ASSERT_EQ(r.exit_code, 0) << Describe(r);
      const nlohmann::json comm = ParseJson(r)["estimate"]["comm"];
      EXPECT_GT(comm["all-reduce"].get<int64_t>(), 0);
      if (method == "zero3") {
        EXPECT_GT(comm["all-gather"].get<int64_t>(), 0);
      }
    }
  }
}

}  // namespace
}  // namespace alpa::tools::testing
