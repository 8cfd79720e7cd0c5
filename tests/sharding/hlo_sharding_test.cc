#include "sharding/hlo_sharding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/file.h"

namespace alpa::sharding {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

HloSharding Parse(std::string_view text) {
  Result<HloSharding> sharding = ParseHloSharding(text);
  EXPECT_TRUE(sharding.ok()) << text << ": " << sharding.status().ToString();
  return sharding.ok() ? *sharding : HloSharding::Tuple({});
}

// Parses `text`, checks it prints as `printed` and that the print parses back to the same value.
void ExpectPrints(std::string_view text, std::string_view printed) {
  const HloSharding sharding = Parse(text);
  EXPECT_EQ(ToString(sharding), printed) << text;
  EXPECT_EQ(Parse(ToString(sharding)), sharding) << text;
}

std::string ParseError(std::string_view text) {
  Result<HloSharding> sharding = ParseHloSharding(text);
  EXPECT_FALSE(sharding.ok()) << text << " parsed as " << ToString(*sharding);
  return sharding.ok() ? "" : sharding.status().message();
}

TEST(HloShardingTest, SimpleKinds) {
  EXPECT_EQ(Parse("{replicated}"), HloSharding::Replicated());
  EXPECT_EQ(Parse("{manual}"), HloSharding::Manual());
  EXPECT_EQ(Parse("{maximal device=3}"), HloSharding::Maximal(3));
  ExpectPrints("{replicated}", "{replicated}");
  ExpectPrints("{ manual }", "{manual}");
  ExpectPrints("{maximal device=3}", "{maximal device=3}");
}

TEST(HloShardingTest, ExplicitDeviceLists) {
  const HloSharding s = Parse("{devices=[2,2]0,2,1,3}");
  EXPECT_EQ(s.kind, HloSharding::Kind::kTiled);
  EXPECT_THAT(s.tile_dims, ElementsAre(2, 2));
  EXPECT_THAT(s.devices, ElementsAre(0, 2, 1, 3));
  EXPECT_EQ(s.TensorRank(), 2);
  // Printed as the iota it is; a list that is no iota stays a list.
  ExpectPrints("{devices=[2,2]0,2,1,3}", "{devices=[2,2]<=[2,2]T(1,0)}");
  ExpectPrints("{devices=[2,1]0,1}", "{devices=[2,1]<=[2]}");
  ExpectPrints("{devices=[4]3,1,2,0}", "{devices=[4]3,1,2,0}");
  ExpectPrints("{devices=[2,2]0,1,3,2}", "{devices=[2,2]0,1,3,2}");
  ExpectPrints("{devices=[2]5,7}", "{devices=[2]5,7}");
}

TEST(HloShardingTest, IotaForms) {
  EXPECT_THAT(Parse("{devices=[8,1]<=[8]}").devices, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(Parse("{devices=[2,2]<=[2,2]T(1,0)}").devices, ElementsAre(0, 2, 1, 3));
  // XLA's header example: [4,4,1]<=[4,2,2]T(1,0,2), element [a,b,c] = 4b + 2a + c.
  EXPECT_THAT(Parse("{devices=[4,4,1]<=[4,2,2]T(1,0,2)}").devices,
              ElementsAre(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15));
  ExpectPrints("{devices=[8,1]<=[8]}", "{devices=[8,1]<=[8]}");
  ExpectPrints("{devices=[4,4,1]<=[4,2,2]T(1,0,2)}", "{devices=[4,4,1]<=[4,2,2]T(1,0,2)}");
  // Not canonical as written: printed with the fewest reshape dimensions.
  ExpectPrints("{devices=[2,4]<=[2,4]}", "{devices=[2,4]<=[8]}");
  ExpectPrints("{devices=[2,4]<=[2,4]T(0,1)}", "{devices=[2,4]<=[8]}");
  ExpectPrints("{devices=[4,2]<=[2,2,2]T(2,1,0)}", "{devices=[4,2]<=[2,2,2]T(2,1,0)}");
  ExpectPrints("{devices=[2,4]<=[2,2,2]T(1,2,0)}", "{devices=[2,4]<=[2,4]T(1,0)}");
  ExpectPrints("{devices=[1]<=[1]}", "{devices=[1]<=[1]}");
}

TEST(HloShardingTest, Subgroups) {
  const HloSharding partial = Parse("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_THAT(partial.subgroups, ElementsAre(SubgroupType::kReplicated));
  EXPECT_EQ(partial.TensorRank(), 2);
  ExpectPrints("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
               "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  ExpectPrints("{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
               "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
  // One replicated subgroup is XLA's partial tile, whichever way it is written.
  ExpectPrints("{devices=[2,2]<=[4] last_tile_dims={replicated}}",
               "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  const HloSharding two = Parse("{devices=[1,2,2,2]<=[8] last_tile_dims={manual, replicated}}");
  EXPECT_THAT(two.subgroups, ElementsAre(SubgroupType::kManual, SubgroupType::kReplicated));
  EXPECT_EQ(two.TensorRank(), 2);
  ExpectPrints("{devices=[1,2,2,2]<=[8] last_tile_dims={manual, replicated}}",
               "{devices=[1,2,2,2]<=[8] last_tile_dims={manual, replicated}}");
  ExpectPrints("{devices=[4,1,2,4]<=[8,4]T(1,0) last_tile_dims={unreduced, replicated}}",
               "{devices=[4,1,2,4]<=[8,4]T(1,0) last_tile_dims={unreduced, replicated}}");
  ExpectPrints("{devices=[1,1,4]<=[4] last_tile_dims={manual}}",
               "{devices=[1,1,4]<=[4] last_tile_dims={manual}}");
}

TEST(HloShardingTest, Tuples) {
  const HloSharding t = Parse("{{replicated}, {devices=[2,1]0,1}}");
  ASSERT_EQ(t.kind, HloSharding::Kind::kTuple);
  ASSERT_EQ(t.elements.size(), 2u);
  EXPECT_EQ(t.elements[0], HloSharding::Replicated());
  EXPECT_THAT(t.elements[1].devices, ElementsAre(0, 1));
  ExpectPrints("{{replicated}, {devices=[2,1]0,1}}", "{{replicated}, {devices=[2,1]<=[2]}}");
  ExpectPrints("{{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate},{replicated}}",
               "{{devices=[2,1,2]<=[4] last_tile_dim_replicate}, {replicated}}");
  ExpectPrints("{{{manual}}, {maximal device=0}}", "{{{manual}}, {maximal device=0}}");
  ExpectPrints("{}", "{}");
}

TEST(HloShardingTest, MetadataIsSkipped) {
  EXPECT_EQ(Parse("{devices=[2,1]0,1 metadata={op_name=\"a\"}}"), Parse("{devices=[2,1]0,1}"));
  EXPECT_EQ(Parse("{replicated metadata={op_name=\"a}{\" source_line=3}}"),
            HloSharding::Replicated());
  EXPECT_EQ(Parse("{maximal device=1 metadata={{op_name=\"x\\\"}\"}, {op_type=\"y\"}}}"),
            HloSharding::Maximal(1));
  ExpectPrints("{{manual metadata={op_name=\"m\"}}, {replicated}}", "{{manual}, {replicated}}");
}

TEST(HloShardingTest, ErrorsNameTheColumnAndWhatWasExpected) {
  EXPECT_THAT(ParseError("replicated"), HasSubstr("column 1: expected '{'"));
  EXPECT_THAT(ParseError("{replicated"), HasSubstr("column 12: expected a sharding keyword"));
  EXPECT_THAT(ParseError("{devices=[2,1 0,1}"), HasSubstr("column 15: expected ']'"));
  EXPECT_THAT(ParseError("{devices=[2,1]}"), HasSubstr("column 15: expected an integer"));
  EXPECT_THAT(ParseError("{devices=[2]<=[2]T(1,0}"), HasSubstr("column 23: expected ')'"));
  EXPECT_THAT(ParseError("{replicas}"), HasSubstr("column 2: unknown sharding keyword 'replicas'"));
  EXPECT_THAT(ParseError("{replicated} x"), HasSubstr("column 14: expected the end"));
  EXPECT_THAT(ParseError("{devices=[2,2]0,1,2 last_tile_dim_replicate}"),
              HasSubstr("column 2: 3 devices for a tile grid [2,2]"));
  EXPECT_THAT(ParseError("{devices=[2]0,0}"), HasSubstr("a device is listed twice"));
  EXPECT_THAT(ParseError("{devices=[0]}"), HasSubstr("expected an integer"));
  EXPECT_THAT(ParseError("{devices=[0]<=[1]}"), HasSubstr("a tile dimension below 1"));
  EXPECT_THAT(ParseError("{devices=[4]<=[2,2]T(0,0)}"), HasSubstr("does not fit the tile grid"));
  EXPECT_THAT(ParseError("{devices=[4]<=[8]}"), HasSubstr("does not fit the tile grid"));
  EXPECT_THAT(ParseError("{devices=[2]<=[2] last_tile_dims={replicated, manual}}"),
              HasSubstr("2 subgroups for a tile grid of 1 dimensions"));
  EXPECT_THAT(ParseError("{devices=[2,2]<=[4] last_tile_dims={partial}}"),
              HasSubstr("expected a subgroup type"));
  EXPECT_THAT(ParseError("{devices=[2,2]<=[4] last_tile_dim_replicate last_tile_dims={manual}}"),
              HasSubstr("exclusive"));
  EXPECT_THAT(ParseError("{replicated manual}"), HasSubstr("exactly one of"));
  EXPECT_THAT(ParseError("{maximal}"), HasSubstr("'maximal' and 'device=' go together"));
  EXPECT_THAT(ParseError("{replicated replicated}"), HasSubstr("'replicated' given twice"));
  EXPECT_THAT(ParseError("{replicated last_tile_dim_replicate}"), HasSubstr("need devices="));
  EXPECT_THAT(ParseError("{replicated metadata={op_name=\"a\"}"),
              HasSubstr("or '}', found the end"));
  EXPECT_THAT(ParseError("{{replicated} {manual}}"), HasSubstr("column 15: expected '}'"));
}

// Every `sharding={...}` value of the shared HLO corpus parses, and its print parses back to it.
TEST(HloShardingTest, SharedCorpus) {
  const fs::path dir = fs::path(ALPA_SHARED_DIR) / "hlo-corpus";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " not present";
  int found = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    Result<std::string> text = ReadFileToString(entry.path().string());
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    const std::string key = "sharding={";
    for (size_t at = text->find(key); at != std::string::npos; at = text->find(key, at + 1)) {
      // The value: from its '{' to the matching '}'.
      size_t end = at + key.size() - 1;
      for (int depth = 0; end < text->size(); ++end) {
        if ((*text)[end] == '{') ++depth;
        if ((*text)[end] == '}' && --depth == 0) break;
      }
      const std::string value = text->substr(at + key.size() - 1, end + 1 - (at + key.size() - 1));
      SCOPED_TRACE(entry.path().filename().string() + ": " + value);
      const HloSharding sharding = Parse(value);
      EXPECT_EQ(Parse(ToString(sharding)), sharding);
      ++found;
    }
  }
  EXPECT_GT(found, 0);
}

}  // namespace
}  // namespace alpa::sharding
