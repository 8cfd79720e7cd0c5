#include "checkpoint/checkpoint_store.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "checkpoint/tile_file.h"
#include "sharding/sharding_spec.h"
#include "support/file.h"

namespace alpa::checkpoint {
namespace {

namespace fs = std::filesystem;
using sharding::ShardingSpec;
using ::testing::HasSubstr;

// A fresh directory under the test's temporary directory.
std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  return dir.string();
}

// The box `region` of the f32 matrix with `columns` columns holding base + its row-major index.
ir::Literal CountingBox(const TileRegion& region, int64_t columns, float base) {
  ir::Literal box =
      ir::Literal::CreateUninitialized(ir::Shape::Array(ir::DType::kF32, region.extent));
  int64_t k = 0;
  for (int64_t r = 0; r < region.extent[0]; ++r) {
    for (int64_t c = 0; c < region.extent[1]; ++c) {
      box.typed_data<float>()[k++] =
          base + float((region.offset[0] + r) * columns + region.offset[1] + c);
    }
  }
  return box;
}

// Saves the f32[rows, columns] matrix of base + its row-major index under `spec` on `mesh`, as each
// device would (its tiles cut from the whole value), at step `step`.
Status SaveCounting(const std::string& root, int64_t rows, int64_t columns, float base,
                    const ShardingSpec& spec, const std::vector<int64_t>& mesh, int64_t step) {
  ALPA_ASSIGN_OR_RETURN(PendingCheckpoint pending, NextCheckpoint(root, step));
  ALPA_RETURN_IF_ERROR(CreatePendingDirectory(pending));
  Manifest manifest{kManifestVersion, "counting", "f", step, "test", mesh, {}};
  SavedValue value{"w", ir::DType::kF32, {rows, columns}, sharding::ToString(spec), {}};
  int64_t devices = 1;
  for (int64_t n : mesh) devices *= n;
  for (int64_t device = 0; device < devices; ++device) {
    if (!SavesRegion(spec, mesh, device)) continue;
    ALPA_ASSIGN_OR_RETURN(TileRegion region,
                          DeviceRegion({rows, columns}, spec, mesh, device, "w"));
    const ir::Literal tile = CountingBox(region, columns, base);
    ALPA_ASSIGN_OR_RETURN(std::vector<SavedTile> saved,
                          WriteDeviceTiles(pending, device, {{"w", region, &tile}}));
    value.tiles.push_back(saved.front());
  }
  manifest.values.push_back(value);
  return CommitCheckpoint(pending, manifest);
}

TEST(CheckpointStoreTest, AnyBoxIsReadFromTheTilesItOverlapsAndNothingElse) {
  const std::string root = FreshDir("boxes");
  // Columns split four ways: a box of rows crosses every tile.
  ASSERT_TRUE(SaveCounting(root, 8, 16, 0.5f, ShardingSpec::SplitDim(2, 1, {0}), {4}, 3).ok());
  Result<Checkpoint> checkpoint = Checkpoint::Open(root);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  EXPECT_EQ(checkpoint->manifest().step, 3);
  const SavedValue& w = *checkpoint->Find("w");
  for (const TileRegion& box : {TileRegion{{0, 0}, {8, 16}}, TileRegion{{2, 0}, {2, 16}},
                                TileRegion{{1, 3}, {5, 9}}, TileRegion{{7, 15}, {1, 1}}}) {
    const int64_t before = checkpoint->bytes_read();
    Result<ir::Literal> read = checkpoint->ReadRegion(w, box);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(*read, CountingBox(box, 16, 0.5f)) << ToString(box);
    EXPECT_EQ(checkpoint->bytes_read() - before, box.ElementCount() * 4) << ToString(box);
  }
  // Replicated over a (2, 2) mesh's axis 1: two tiles saved, by devices 0 and 2.
  const std::string rows = FreshDir("rows");
  ASSERT_TRUE(SaveCounting(rows, 8, 4, 0, ShardingSpec::SplitDim(2, 0, {0}), {2, 2}, 1).ok());
  Result<Checkpoint> replicated = Checkpoint::Open(rows);
  ASSERT_TRUE(replicated.ok());
  ASSERT_EQ(replicated->manifest().values[0].tiles.size(), 2u);
  EXPECT_EQ(replicated->manifest().values[0].tiles[1].device, 2);
}

TEST(CheckpointStoreTest, EachCommitIsANewGenerationAndTheOldestGo) {
  const std::string root = FreshDir("generations");
  for (int64_t step = 2; step <= 8; step += 2) {
    ASSERT_TRUE(SaveCounting(root, 4, 4, float(step), ShardingSpec::Replicated(2), {1}, step).ok());
  }
  EXPECT_EQ(*ReadFileToString(root + "/LATEST"), "ckpt-000004-step-8\n");
  EXPECT_TRUE(fs::exists(root + "/ckpt-000003-step-6"));
  EXPECT_FALSE(fs::exists(root + "/ckpt-000002-step-4"));
  EXPECT_FALSE(fs::exists(root + "/ckpt-000001-step-2"));
  // A checkpoint's own directory opens too.
  Result<Checkpoint> previous = Checkpoint::Open(root + "/ckpt-000003-step-6");
  ASSERT_TRUE(previous.ok()) << previous.status().message();
  EXPECT_EQ(previous->manifest().step, 6);
}

// A writer killed between renaming its directory into place and replacing LATEST leaves a
// generation LATEST never named; the next writer, numbering from LATEST, reuses its name (the
// kill test found it: the rename failed on the non-empty directory). It is cleared first.
TEST(CheckpointStoreTest, AGenerationLatestNeverNamedIsClearedForTheNext) {
  const std::string root = FreshDir("orphan");
  const ShardingSpec whole = ShardingSpec::Replicated(2);
  ASSERT_TRUE(SaveCounting(root, 4, 4, 1, whole, {1}, 1).ok());
  ASSERT_TRUE(SaveCounting(root, 4, 4, 2, whole, {1}, 2).ok());
  // Undo the second commit's LATEST: as if the writer died just before it.
  ASSERT_TRUE(WriteStringToFile(root + "/LATEST", "ckpt-000001-step-1\n").ok());
  const Status again = SaveCounting(root, 4, 4, 2, whole, {1}, 2);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(*ReadFileToString(root + "/LATEST"), "ckpt-000002-step-2\n");
}

TEST(CheckpointStoreTest, TileFilesAreSafetensors) {
  const std::string root = FreshDir("safetensors");
  ASSERT_TRUE(SaveCounting(root, 4, 4, 0, ShardingSpec::SplitDim(2, 0, {0}), {2}, 1).ok());
  Result<std::string> bytes =
      ReadFileToString(root + "/ckpt-000001-step-1/device-0001.safetensors");
  ASSERT_TRUE(bytes.ok());
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = header_length << 8 | uint8_t((*bytes)[i]);
  EXPECT_EQ(header_length % 8, 0u);
  const std::string header = bytes->substr(8, header_length);
  EXPECT_THAT(header,
              HasSubstr("\"w\":{\"dtype\":\"F32\",\"shape\":[2,4],\"data_offsets\":[0,32]}"));
  EXPECT_EQ(bytes->size(), 8 + header_length + 32);
}

// Corrupts the checkpoint's file `file` (under its LATEST) with `edit`, then reads w whole.
Status ReadAfter(const std::string& root, const std::string& file,
                 const std::function<void(const fs::path&)>& edit) {
  ALPA_ASSIGN_OR_RETURN(Checkpoint checkpoint, Checkpoint::Open(root));
  edit(fs::path(checkpoint.dir()) / file);
  const SavedValue& w = *checkpoint.Find("w");
  return checkpoint.ReadRegion(w, {{0, 0}, w.dims}).status();
}

TEST(CheckpointStoreTest, DamagedTilesNameTheirFile) {
  const std::string root = FreshDir("damaged");
  const ShardingSpec rows = ShardingSpec::SplitDim(2, 0, {0});
  ASSERT_TRUE(SaveCounting(root, 4, 4, 0, rows, {2}, 1).ok());
  const Status flipped = ReadAfter(root, "device-0001.safetensors", [](const fs::path& path) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(-3, std::ios::end);
    const char byte = static_cast<char>(file.get() ^ 0x40);
    file.seekp(-3, std::ios::end);
    file.put(byte);
  });
  EXPECT_THAT(flipped.message(), HasSubstr("device-0001.safetensors: the tile of w at [2:4, 0:4]"));
  EXPECT_THAT(flipped.message(), HasSubstr("the checkpoint is corrupted"));

  const Status missing =
      ReadAfter(root, "device-0000.safetensors", [](const fs::path& path) { fs::remove(path); });
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("device-0000.safetensors: the tile file the manifest "
                                           "names is missing"));

  ASSERT_TRUE(SaveCounting(root, 4, 4, 0, rows, {2}, 2).ok());
  const Status truncated = ReadAfter(root, "device-0001.safetensors", [](const fs::path& path) {
    fs::resize_file(path, fs::file_size(path) - 8);
  });
  EXPECT_THAT(truncated.message(), HasSubstr("the checkpoint is truncated"));

  const Status none = Checkpoint::Open(FreshDir("empty")).status();
  EXPECT_THAT(none.message(), HasSubstr("no checkpoint here"));
}

// Writes checkpoints of f32[64, 256] on 4 devices forever, generation k's values all k.
[[noreturn]] void WriteForever(const std::string& root, int64_t first) {
  for (int64_t k = first;; ++k) {
    Result<PendingCheckpoint> pending = NextCheckpoint(root, k);
    if (!pending.ok() || !CreatePendingDirectory(*pending).ok()) _exit(3);
    Manifest manifest{kManifestVersion, "crash", "f", k, "test", {4}, {}};
    SavedValue value{"w", ir::DType::kF32, {64, 256}, "[S0,R]", {}};
    for (int64_t device = 0; device < 4; ++device) {
      ir::Literal tile = ir::Literal::FromDoubles(ir::Shape::Array(ir::DType::kF32, {16, 256}),
                                                  std::vector<double>(16 * 256, double(k)));
      Result<std::vector<SavedTile>> saved =
          WriteDeviceTiles(*pending, device, {{"w", {{16 * device, 0}, {16, 256}}, &tile}});
      if (!saved.ok()) _exit(4);
      value.tiles.push_back(saved->front());
    }
    manifest.values = {value};
    if (!CommitCheckpoint(*pending, manifest).ok()) _exit(5);
  }
}

// A writer killed (SIGKILL) at random points always leaves LATEST naming a whole checkpoint: every
// tile present, every checksum right, and one generation's values throughout.
TEST(CheckpointStoreTest, AWriterKilledAnywhereLeavesAWholeCheckpoint) {
  const std::string root = FreshDir("crash");
  std::mt19937 random(2026);
  std::uniform_int_distribution<int> delay_us(0, 20000);
  int64_t last_step = 0;
  int torn = 0;  // trials that killed the writer inside a checkpoint (a .partial left behind)
  for (int trial = 0; trial < 50; ++trial) {
    const pid_t writer = fork();
    ASSERT_GE(writer, 0);
    if (writer == 0) WriteForever(root, last_step + 1);
    // The first trial waits for a first commit, so that there is always one to read.
    if (trial == 0) {
      while (!fs::exists(root + "/LATEST"))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(random)));
    ASSERT_EQ(kill(writer, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(writer, &status, 0), writer);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "the writer stopped by itself: exit " << WEXITSTATUS(status);
    for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
      if (entry.path().extension() == ".partial") ++torn;
    }

    Result<Checkpoint> checkpoint = Checkpoint::Open(root);
    ASSERT_TRUE(checkpoint.ok()) << "trial " << trial << ": " << checkpoint.status().message();
    const SavedValue& w = *checkpoint->Find("w");
    Result<ir::Literal> value = checkpoint->ReadRegion(w, {{0, 0}, {64, 256}});
    ASSERT_TRUE(value.ok()) << "trial " << trial << ": " << value.status().message();
    const int64_t step = checkpoint->manifest().step;
    EXPECT_GE(step, last_step) << "trial " << trial;
    EXPECT_EQ(*value,
              ir::Literal::FromDoubles(value->shape(), std::vector<double>(64 * 256, double(step))))
        << "trial " << trial;
    last_step = step;
  }
  // How many kills landed inside a write depends on the machine's speed; it is reported, not
  // asserted.
  RecordProperty("kills_inside_a_write", torn);
  std::printf("%d of 50 kills landed inside a checkpoint's write\n", torn);
}

}  // namespace
}  // namespace alpa::checkpoint
