#include "support/status.h"

#include <gtest/gtest.h>

namespace alpa {
namespace {

Result<int> ParsePositive(int value) {
  if (value <= 0) return InvalidArgument("value {} is not positive", value);
  return value;
}

Result<int> Doubled(int value) {
  ALPA_ASSIGN_OR_RETURN(int parsed, ParsePositive(value));
  return parsed * 2;
}

Status CheckBoth(int a, int b) {
  ALPA_RETURN_IF_ERROR(ParsePositive(a));
  ALPA_RETURN_IF_ERROR(ParsePositive(b));
  return Status::Ok();
}

TEST(StatusTest, ResultCarriesValueOrError) {
  Result<int> good = Doubled(4);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 8);

  Result<int> bad = Doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "value -1 is not positive");
  EXPECT_EQ(bad.status().ToString(), "INVALID_ARGUMENT: value -1 is not positive");
}

TEST(StatusTest, ReturnIfErrorStopsAtFirstError) {
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  Status status = CheckBoth(1, -2);
  EXPECT_EQ(status.message(), "value -2 is not positive");
}

TEST(StatusTest, WithContextPrefixesMessage) {
  Status status = NotFound("no such file").WithContext("model.hlo");
  EXPECT_EQ(status.message(), "model.hlo: no such file");
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(StatusTest, ResultFromOkStatusIsAnError) {
  Result<int> result{Status::Ok()};
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInternal);
}

TEST(StatusDeathTest, CheckAbortsWithMessage) {
  EXPECT_DEATH(ALPA_CHECK(1 + 1 == 3, "math is {}", "broken"), "math is broken");
}

}  // namespace
}  // namespace alpa
