// Manual pins (sharding/pins.h): a shardings file and the HLO's own sharding attributes, with
// the errors naming the file, the key or the instruction.
#include "sharding/pins.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/parser.h"

namespace alpa::sharding {
namespace {

using ::testing::HasSubstr;

constexpr const char* kModule = R"(HloModule m
ENTRY %main {
  %x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  %w = f32[4,4] parameter(1)
  %dot = f32[8,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %neg = f32[8,4] negate(%dot)
  ROOT %out = (f32[8,4], f32[4,4]) tuple(%neg, %w), sharding={{devices=[1,4]<=[4]}, {replicated}}
}
)";

std::unique_ptr<ir::Module> Module() {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(kModule, "m.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return std::move(module).value();
}

std::map<std::string, std::string> Readable(const Pins& pins) {
  std::map<std::string, std::string> out;
  for (const auto& [name, specs] : pins) {
    std::string text;
    for (const ShardingSpec& spec : specs) text += ToString(spec);
    out[name] = text;
  }
  return out;
}

TEST(PinsTest, ShardingsFile) {
  auto module = Module();
  Result<Pins> pins =
      PinsFromShardingsText(R"({"x": "{devices=[4,1]<=[4]}", "dot": "{devices=[2,2]<=[4]}"})",
                            "s.json", *module->entry(), {2, 2});
  ASSERT_TRUE(pins.ok()) << pins.status().message();
  const std::map<std::string, std::string> expected = {{"x", "[S01,R]"}, {"dot", "[S0,S1]"}};
  EXPECT_EQ(Readable(*pins), expected);
}

TEST(PinsTest, TuplePinsLandOnTheProducers) {
  auto module = Module();
  Result<Pins> pins = PinsFromHloShardings(*module->entry(), {4});
  ASSERT_TRUE(pins.ok()) << pins.status().message();
  const std::map<std::string, std::string> expected = {
      {"x", "[S0,R]"}, {"neg", "[R,S0]"}, {"w", "[R,R]"}};
  EXPECT_EQ(Readable(*pins), expected);
}

TEST(PinsTest, EarlierSourceWins) {
  Pins pins = {{"x", {ShardingSpec::Replicated(2)}}};
  MergePins(pins,
            {{"x", {ShardingSpec::SplitDim(2, 0, {0})}}, {"w", {ShardingSpec::Replicated(2)}}});
  EXPECT_EQ(Readable(pins), (std::map<std::string, std::string>{{"x", "[R,R]"}, {"w", "[R,R]"}}));
}

TEST(PinsTest, FileErrorsNameTheFileAndKey) {
  auto module = Module();
  const ir::Computation& entry = *module->entry();
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{R"({"nope": "{replicated}"})", "s.json: key 'nope': no instruction"},
           Case{R"({"x": "{devices=[4,1"})", "s.json: key 'x': sharding column"},
           Case{R"({"x": "{devices=[3,1]<=[3]}"})", "s.json: key 'x'"},
           Case{R"({"x": "{maximal device=0}"})", "s.json: key 'x'"},
           Case{R"({"x": 3})", "s.json: key 'x': expected a string"},
           Case{R"(["x"])", "s.json: expected a JSON object"},
           Case{R"({"x": )", "s.json:1:"},
           Case{R"({"neg": "{replicated}", "out": "{{devices=[4,1]<=[4]}, {replicated}}"})",
                "both lay out %neg"},
       }) {
    Result<Pins> pins = PinsFromShardingsText(c.text, "s.json", entry, {4});
    ASSERT_FALSE(pins.ok()) << c.text;
    EXPECT_THAT(pins.status().message(), HasSubstr(c.message)) << c.text;
  }
}

TEST(PinsTest, HloErrorsNameTheInstructionAndSuggestIgnoring) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(R"(HloModule m
ENTRY %main {
  ROOT %x = f32[8] parameter(0), sharding={maximal device=1}
}
)",
                                                                   "m.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  Result<Pins> pins = PinsFromHloShardings(*(*module)->entry(), {4});
  ASSERT_FALSE(pins.ok());
  EXPECT_THAT(pins.status().message(), HasSubstr("%x (line 3) sharding={maximal device=1}"));
  EXPECT_THAT(pins.status().message(), HasSubstr("--ignore-hlo-shardings"));
}

}  // namespace
}  // namespace alpa::sharding
