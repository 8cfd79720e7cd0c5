#include "solver/search_progress.h"

#include <gtest/gtest.h>

#include <vector>

namespace alpa::solver {
namespace {

TEST(SearchProgressTest, FirstWithinIsTheFirstImprovementCloseEnough) {
  const std::vector<Improvement> improvements = {{0.5, 200}, {1.5, 105}, {2.5, 101}, {9.0, 100}};
  EXPECT_EQ(FirstWithin(improvements, 100, 0.01), 2.5);  // 101 <= 1.01 * 100
  EXPECT_EQ(FirstWithin(improvements, 100, 0.05), 1.5);
  EXPECT_EQ(FirstWithin(improvements, 100, 0.0), 9.0);
  EXPECT_EQ(FirstWithin(improvements, 50, 0.01), std::nullopt);
  EXPECT_EQ(FirstWithin({}, 100, 0.01), std::nullopt);
}

}  // namespace
}  // namespace alpa::solver
