// Corpus conformance: for every valid module, print(parse(x)) parses again, printing that gives
// the same text, and both parsed modules are structurally equal.
#include <gtest/gtest.h>

#include <filesystem>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "structural_equal.h"
#include "support/file.h"

namespace alpa::hlo {
namespace {

namespace fs = std::filesystem;

// Parses `text`, prints, re-parses, re-prints; reports the first failure.
void ExpectRoundTrip(const std::string& text, const std::string& name) {
  SCOPED_TRACE(name);
  auto first = ParseHloModule(text, name);
  ASSERT_TRUE(first.ok()) << first.status().message();
  const std::string printed = PrintModule(**first);
  auto second = ParseHloModule(printed, name + " (printed)");
  ASSERT_TRUE(second.ok()) << second.status().message() << "\n" << printed.substr(0, 4000);
  EXPECT_EQ(PrintModule(**second), printed);
  EXPECT_EQ(testing::StructuralDifference(**first, **second), "");
  EXPECT_EQ((*first)->instruction_count(), (*second)->instruction_count());
}

std::vector<fs::path> HloFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RoundTripTest, VendoredCorpus) {
  const fs::path dir = fs::path(ALPA_TESTDATA_DIR) / "hlo";
  std::vector<fs::path> files = HloFiles(dir);
  ASSERT_GE(files.size(), 4u);
  for (const fs::path& file : files) {
    auto text = ReadFileToString(file.string());
    ASSERT_TRUE(text.ok()) << text.status().message();
    ExpectRoundTrip(*text, file.filename().string());
  }
}

TEST(RoundTripTest, SharedCorpus) {
  const fs::path dir = fs::path(ALPA_SHARED_DIR) / "hlo-corpus";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " not present";
  for (const fs::path& file : HloFiles(dir)) {
    // Malformed as stored (see testdata/hlo/invalid and ErrorsTest.MalformedCorpusFiles).
    if (file.filename() == "neuronx_llama_fused_qkv_slice.hlo" ||
        file.filename() == "edge_gpt2_entry_only.hlo") {
      continue;
    }
    auto text = ReadFileToString(file.string());
    ASSERT_TRUE(text.ok()) << text.status().message();
    ExpectRoundTrip(*text, file.filename().string());
  }
}

}  // namespace
}  // namespace alpa::hlo
