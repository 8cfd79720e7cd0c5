// The IOPDDL contest's public instances (../shared/iopddl, when present): each loads, and the
// checker evaluates a trivial choice on it. Skipped where the shared folder is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "solver/checker.h"
#include "solver/iopddl_json.h"

namespace alpa::solver {
namespace {

class SharedInstance : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedInstance, LoadsAndEvaluates) {
  const std::string path =
      std::string(ALPA_SHARED_DIR) + "/iopddl/asplos-2025-iopddl-" + GetParam() + ".json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not present";
  Result<Request> request = LoadIopddlFile(path);
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->name, "asplos-2025-iopddl-" + GetParam());
  EXPECT_GT(request->nodes.size(), 100u);
  EXPECT_TRUE(request->usage_limit.has_value());
  // Strategy 0 everywhere: a valid choice, whatever its cost and memory.
  Result<Evaluation> evaluation =
      EvaluateChoice(*request, std::vector<int64_t>(request->nodes.size(), 0));
  ASSERT_TRUE(evaluation.ok()) << evaluation.status().message();
  EXPECT_GT(evaluation->cost, 0);
  EXPECT_GT(evaluation->peak_usage, 0);
}

INSTANTIATE_TEST_SUITE_P(Iopddl, SharedInstance, ::testing::Values("A", "B", "G", "M", "S"));

}  // namespace
}  // namespace alpa::solver
