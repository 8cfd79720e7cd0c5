// Reading a saved pipelined plan's stages (--manual-stages plan.json): fields of the wrong type
// are named errors, never an exception out of the reader.
#include "plan/manual_stages.h"

#include <gtest/gtest.h>

#include <string>

namespace alpa::plan {
namespace {

constexpr const char* kSavedPlan = R"({
  "format": "alpa-plan", "version": 2, "num_layers": 2, "num_micro_batches": 4,
  "schedule": "1f1b",
  "stages": [{"layers": [0, 0], "submesh": [1, 1], "logical_mesh": [1, 1]},
             {"layers": [1, 1], "submesh": [1, 1], "logical_mesh": [1, 1]}]
})";

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(SavedPlanStagesTest, ASavedPipelinedPlanGivesItsStages) {
  const Result<ManualStages> stages = ParseSavedPlanStages(kSavedPlan, "plan.json");
  ASSERT_TRUE(stages.ok()) << stages.status().message();
  EXPECT_EQ(stages->num_layers, 2);
  ASSERT_EQ(stages->stages.size(), 2u);
  EXPECT_EQ(stages->stages[1].layers, (std::vector<int64_t>{1}));
}

// Found by the manual_stages fuzzer: "format": 6 threw nlohmann's type_error out of the reader.
TEST(SavedPlanStagesTest, AFormatOrVersionOfAnotherTypeIsNotAPlanDocument) {
  const Result<ManualStages> numeric_format =
      ParseSavedPlanStages(Replaced(kSavedPlan, "\"alpa-plan\"", "6"), "plan.json");
  ASSERT_FALSE(numeric_format.ok());
  EXPECT_NE(numeric_format.status().message().find("plan.json: not a plan document"),
            std::string::npos)
      << numeric_format.status().message();

  const Result<ManualStages> text_version =
      ParseSavedPlanStages(Replaced(kSavedPlan, "\"version\": 2", "\"version\": \"2\""), "p.json");
  ASSERT_FALSE(text_version.ok());
  EXPECT_NE(text_version.status().message().find("(version \"2\")"), std::string::npos)
      << text_version.status().message();
}

}  // namespace
}  // namespace alpa::plan
