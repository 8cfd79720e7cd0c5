// input_output_alias: the entries PyTorch/XLA and JAX write, read from the module header's text.
#include "hlo/input_output_alias.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/parser.h"

namespace alpa::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(InputOutputAliasTest, ReadsEveryEntry) {
  Result<std::vector<InputOutputAlias>> aliases = ParseInputOutputAlias(
      "{ {0}: (2, {}, must-alias), {1}: (0, {}, may-alias), {2, 1}: (3, {1}) }");
  ASSERT_TRUE(aliases.ok()) << aliases.status().ToString();
  ASSERT_EQ(aliases->size(), 3u);
  EXPECT_THAT((*aliases)[0].output_index, ElementsAre(0));
  EXPECT_EQ((*aliases)[0].parameter, 2);
  EXPECT_TRUE((*aliases)[0].parameter_index.empty());
  EXPECT_TRUE((*aliases)[0].must_alias);
  EXPECT_FALSE((*aliases)[1].must_alias);
  EXPECT_THAT((*aliases)[2].output_index, ElementsAre(2, 1));
  EXPECT_THAT((*aliases)[2].parameter_index, ElementsAre(1));
  EXPECT_TRUE(ParseInputOutputAlias("{}")->empty());
}

TEST(InputOutputAliasTest, AModulesHeaderOrNone) {
  Result<std::unique_ptr<ir::Module>> with = ParseHloModule(R"(
HloModule step, input_output_alias={ {0}: (1, {}, must-alias) }
ENTRY e {
  x = f32[4] parameter(0)
  w = f32[4] parameter(1)
  ROOT t = (f32[4]) tuple(x)
})");
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  Result<std::vector<InputOutputAlias>> aliases = InputOutputAliases(**with);
  ASSERT_TRUE(aliases.ok());
  ASSERT_EQ(aliases->size(), 1u);
  EXPECT_EQ((*aliases)[0].parameter, 1);

  Result<std::unique_ptr<ir::Module>> without = ParseHloModule(R"(
HloModule step
ENTRY e {
  ROOT x = f32[4] parameter(0)
})");
  ASSERT_TRUE(without.ok());
  EXPECT_TRUE(InputOutputAliases(**without)->empty());
}

TEST(InputOutputAliasTest, BadTextNamesWhatWasExpected) {
  const std::pair<const char*, const char*> cases[] = {
      {"{0}: (1, {})", "expected the output's shape index"},
      {"{ {0} (1, {}) }", "':' after the output's shape index"},
      {"{ {0}: (x, {}) }", "the parameter number"},
      {"{ {0}: (1, {}, aliased) }", "must-alias or may-alias"},
      {"{ {0}: (1, {}) } trailing", "the end of the attribute"},
  };
  for (const auto& [text, expected] : cases) {
    Result<std::vector<InputOutputAlias>> aliases = ParseInputOutputAlias(text);
    ASSERT_FALSE(aliases.ok()) << text;
    EXPECT_THAT(aliases.status().message(), HasSubstr(expected)) << text;
  }
}

}  // namespace
}  // namespace alpa::hlo
