#include "checkpoint/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace alpa::checkpoint {
namespace {

using ::testing::HasSubstr;

Manifest TwoTileManifest() {
  Manifest manifest;
  manifest.model = "mlp-tiny";
  manifest.fingerprint = StateFingerprint("mlp-tiny", {{"w", ir::DType::kF32, {4, 2}}});
  manifest.step = 6;
  manifest.method = "data";
  manifest.mesh_shape = {2};
  SavedValue value{"w", ir::DType::kF32, {4, 2}, "[S0,R]", {}};
  value.tiles.push_back({0, "device-0000.safetensors", {{0, 0}, {2, 2}}, 96, 112, 7});
  value.tiles.push_back({1, "device-0001.safetensors", {{2, 0}, {2, 2}}, 96, 112, 0xffffffffu});
  manifest.values.push_back(value);
  return manifest;
}

TEST(ManifestTest, TextRoundTrips) {
  const Manifest manifest = TwoTileManifest();
  const std::string text = ManifestText(manifest);
  Result<Manifest> parsed = ParseManifest(text, "m.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(ManifestText(*parsed), text);
  EXPECT_EQ(parsed->values[0].tiles[1].crc32, 0xffffffffu);
  EXPECT_EQ(parsed->values[0].tiles[1].region.offset, (std::vector<int64_t>{2, 0}));
}

TEST(ManifestTest, TheFingerprintIsOfTheValuesNotThePlan) {
  const std::string here = StateFingerprint("gpt-tiny", {{"w", ir::DType::kF32, {4, 2}}});
  EXPECT_EQ(here, StateFingerprint("gpt-tiny", {{"w", ir::DType::kF32, {4, 2}}}));
  EXPECT_NE(here, StateFingerprint("gpt-tiny", {{"w", ir::DType::kF16, {4, 2}}}));
  EXPECT_NE(here, StateFingerprint("gpt-tiny", {{"w", ir::DType::kF32, {2, 4}}}));
  EXPECT_NE(here, StateFingerprint("mlp-tiny", {{"w", ir::DType::kF32, {4, 2}}}));
}

// Replaces the first occurrence of `from` in the manifest's text and parses it.
Status ParseEdited(const std::string& from, const std::string& to) {
  std::string text = ManifestText(TwoTileManifest());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return ParseManifest(text, "ckpt/manifest.json").status();
}

TEST(ManifestTest, BadFieldsAreNamed) {
  const Status newer = ParseEdited("\"version\": 1", "\"version\": 7");
  EXPECT_THAT(newer.message(), HasSubstr("version 7 was written by a newer alpa"));

  const Status checksum = ParseEdited("\"crc32\":7", "\"crc\":7");
  EXPECT_THAT(checksum.message(), HasSubstr("ckpt/manifest.json"));
  EXPECT_THAT(checksum.message(), HasSubstr("values[0].tiles[0]"));

  const Status outside = ParseEdited("\"offset\":[2,", "\"offset\":[3,");
  EXPECT_THAT(outside.message(), HasSubstr("values[0].tiles[1]: the tile [3:5, 0:2] runs past"));

  const Status bytes = ParseEdited("112", "113");
  EXPECT_THAT(bytes.message(), HasSubstr("do not hold the 4 elements"));

  const Status escape = ParseEdited("device-0001.safetensors", "../secret");
  EXPECT_THAT(escape.message(), HasSubstr("not a file name inside the checkpoint"));

  const Status other = ParseManifest("{\"format\": \"alpa-plan\"}", "p.json").status();
  EXPECT_THAT(other.message(), HasSubstr("not a checkpoint manifest"));
}

TEST(ManifestTest, TilesThatLeaveAHoleAreRefused) {
  Manifest manifest = TwoTileManifest();
  manifest.values[0].tiles.pop_back();
  const Status hole = ParseManifest(ManifestText(manifest), "m.json").status();
  EXPECT_THAT(hole.message(), HasSubstr("values[0]: its tiles hold 4 elements of the value's 8"));
}

}  // namespace
}  // namespace alpa::checkpoint
