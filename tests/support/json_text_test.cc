#include "support/json_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace alpa {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(JsonTextTest, AppendNewKeyKeepsTheOrderAndTheValues) {
  Json object = Json::object();
  AppendNewKey(object, "b", 1);
  AppendNewKey(object, "a", {{"x", "y"}});
  object["c"] = true;  // the object stays an ordinary one afterwards
  EXPECT_EQ(object.dump(), R"({"b":1,"a":{"x":"y"},"c":true})");
  EXPECT_EQ(object["a"]["x"], "y");
  EXPECT_EQ(object.size(), 3u);
}

TEST(JsonTextTest, SyntaxErrorsNameTheLineAndColumn) {
  Result<Json> bad = ParseJsonText("{\n \"a\": [1,]\n}", "f.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), StartsWith("f.json:2:"));
  EXPECT_THAT(bad.status().message(), HasSubstr("malformed JSON"));
}

// Found by the cluster-file fuzz target: a number beyond a double's range threw out of the parser
// (nlohmann's out_of_range, not a parse_error) and ended the program.
TEST(JsonTextTest, ANumberBeyondADoubleIsMalformedNotACrash) {
  Result<Json> huge = ParseJsonText("{\"bandwidth\": 15.7e1216}", "cluster.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(huge.status().message(),
              HasSubstr("cluster.json: malformed JSON: number overflow parsing '15.7e1216'"));
}

}  // namespace
}  // namespace alpa
