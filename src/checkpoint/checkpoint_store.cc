#include "checkpoint/checkpoint_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "checkpoint/durable_file.h"
#include "checkpoint/tile_file.h"
#include "ir/shape.h"
#include "support/file.h"

namespace alpa::checkpoint {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kLatest = "LATEST";
constexpr std::string_view kManifest = "manifest.json";
constexpr std::string_view kPartial = ".partial";

Status FilesystemError(const std::string& what, const std::string& path,
                       const std::error_code& error) {
  return InvalidArgument("{}: cannot {} ({})", path, what, error.message());
}

// The generation of a checkpoint directory's name ("ckpt-000003-step-12" -> 3), or -1.
int64_t GenerationOf(std::string_view name) {
  constexpr std::string_view kPrefix = "ckpt-";
  if (!name.starts_with(kPrefix) || name.ends_with(kPartial)) return -1;
  name.remove_prefix(kPrefix.size());
  int64_t generation = -1;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), generation);
  if (error != std::errc() ||
      std::string_view(end, name.data() + name.size()).find("-step-") != 0) {
    return -1;
  }
  return generation;
}

// LATEST's checkpoint name, or empty when there is none.
Result<std::string> LatestName(const std::string& root) {
  const std::string path = (fs::path(root) / kLatest).string();
  std::error_code error;
  if (!fs::exists(path, error)) return std::string();
  ALPA_ASSIGN_OR_RETURN(std::string name, ReadFileToString(path));
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  if (GenerationOf(name) < 0) {
    return InvalidArgument("{}: '{}' names no checkpoint (ckpt-NNNNNN-step-N)", path, name);
  }
  return name;
}

// Calls copy(tile_offset, out_offset, count) (in elements) for each run of `meet` that is
// contiguous in both the tile at `tile` and the output box at `out`, merging rows that follow one
// another in both.
template <typename Fn>
void ForEachRun(const TileRegion& meet, const TileRegion& tile, const TileRegion& out, Fn copy) {
  const size_t rank = meet.extent.size();
  if (rank == 0) {
    copy(0, 0, 1);
    return;
  }
  const std::vector<int64_t> tile_strides = ir::RowMajorStrides(tile.extent);
  const std::vector<int64_t> out_strides = ir::RowMajorStrides(out.extent);
  const int64_t row = meet.extent[rank - 1];
  std::vector<int64_t> index(rank, 0);  // over meet's dims but the last
  int64_t run_tile = -1, run_out = -1, run_count = 0;
  for (;;) {
    int64_t tile_offset = 0, out_offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      tile_offset += (meet.offset[d] - tile.offset[d] + index[d]) * tile_strides[d];
      out_offset += (meet.offset[d] - out.offset[d] + index[d]) * out_strides[d];
    }
    if (run_count > 0 && tile_offset == run_tile + run_count && out_offset == run_out + run_count) {
      run_count += row;
    } else {
      if (run_count > 0) copy(run_tile, run_out, run_count);
      run_tile = tile_offset;
      run_out = out_offset;
      run_count = row;
    }
    size_t d = rank - 1;
    while (d > 0) {
      --d;
      if (++index[d] < meet.extent[d]) break;
      index[d] = 0;
      if (d == 0) {
        copy(run_tile, run_out, run_count);
        return;
      }
    }
    if (rank == 1) {
      copy(run_tile, run_out, run_count);
      return;
    }
  }
}

// Reads exactly `size` bytes at `offset` of `fd`.
Status ReadAt(int fd, char* out, int64_t size, int64_t offset, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, out, static_cast<size_t>(size), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SystemError("read", path);
    if (n == 0) {
      return InvalidArgument(
          "{}: the file ends before byte {} that the manifest places a tile at; "
          "the checkpoint is truncated",
          path, offset + size);
    }
    out += n;
    size -= n;
    offset += n;
  }
  return Status::Ok();
}

}  // namespace

std::string PendingCheckpoint::partial_dir() const {
  return (fs::path(root) / (name + std::string(kPartial))).string();
}

Result<PendingCheckpoint> NextCheckpoint(const std::string& root, int64_t step) {
  ALPA_ASSIGN_OR_RETURN(const std::string latest, LatestName(root));
  const int64_t generation = latest.empty() ? 1 : GenerationOf(latest) + 1;
  return PendingCheckpoint{root, fmt::format("ckpt-{:06d}-step-{}", generation, step)};
}

Status CreatePendingDirectory(const PendingCheckpoint& pending) {
  std::error_code error;
  fs::create_directories(pending.root, error);
  if (error) return FilesystemError("create the checkpoint directory", pending.root, error);
  // What a crash left: .partial directories, and generations renamed into place that LATEST never
  // came to name (a crash between the two renames), whose names the next commits would reuse.
  ALPA_ASSIGN_OR_RETURN(const std::string latest, LatestName(pending.root));
  const int64_t latest_generation = latest.empty() ? 0 : GenerationOf(latest);
  for (const fs::directory_entry& entry : fs::directory_iterator(pending.root, error)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(kPartial) || GenerationOf(name) > latest_generation) {
      fs::remove_all(entry.path(), error);
    }
  }
  if (error) return FilesystemError("clear unfinished checkpoints in", pending.root, error);
  fs::create_directory(pending.partial_dir(), error);
  if (error) return FilesystemError("create", pending.partial_dir(), error);
  return Status::Ok();
}

std::string TileFileName(int64_t device) {
  return fmt::format("device-{:04d}.safetensors", device);
}

Result<std::vector<SavedTile>> WriteDeviceTiles(const PendingCheckpoint& pending, int64_t device,
                                                const std::vector<DeviceTile>& tiles) {
  const std::string file = TileFileName(device);
  std::vector<NamedTile> named;
  for (const DeviceTile& tile : tiles) named.push_back({tile.name, tile.tile});
  ALPA_ASSIGN_OR_RETURN(
      std::vector<WrittenTile> written,
      WriteTileFile((fs::path(pending.partial_dir()) / file).string(), device, named));
  std::vector<SavedTile> saved;
  for (size_t i = 0; i < tiles.size(); ++i) {
    saved.push_back(
        {device, file, tiles[i].region, written[i].begin, written[i].end, written[i].crc32});
  }
  return saved;
}

Status CommitCheckpoint(const PendingCheckpoint& pending, const Manifest& manifest, int64_t keep) {
  const std::string partial = pending.partial_dir();
  ALPA_RETURN_IF_ERROR(
      WriteFileDurably((fs::path(partial) / kManifest).string(), {ManifestText(manifest)}));
  ALPA_RETURN_IF_ERROR(SyncDirectory(partial));
  const std::string final_dir = (fs::path(pending.root) / pending.name).string();
  std::error_code error;
  fs::rename(partial, final_dir, error);
  if (error) return FilesystemError("commit the checkpoint as " + final_dir, partial, error);
  ALPA_RETURN_IF_ERROR(SyncDirectory(pending.root));
  const std::string latest = (fs::path(pending.root) / kLatest).string();
  const std::string latest_partial = latest + std::string(kPartial);
  ALPA_RETURN_IF_ERROR(WriteFileDurably(latest_partial, {pending.name + "\n"}));
  fs::rename(latest_partial, latest, error);
  if (error) return FilesystemError("replace", latest, error);
  ALPA_RETURN_IF_ERROR(SyncDirectory(pending.root));
  // Older generations go only now that LATEST names the new one.
  std::vector<std::pair<int64_t, fs::path>> generations;
  for (const fs::directory_entry& entry : fs::directory_iterator(pending.root, error)) {
    const int64_t generation = GenerationOf(entry.path().filename().string());
    if (generation >= 0) generations.emplace_back(generation, entry.path());
  }
  std::sort(generations.rbegin(), generations.rend());
  for (size_t i = static_cast<size_t>(std::max<int64_t>(keep, 2)); i < generations.size(); ++i) {
    fs::remove_all(generations[i].second, error);
  }
  return Status::Ok();
}

Result<Checkpoint> Checkpoint::Open(const std::string& path) {
  std::error_code error;
  Checkpoint checkpoint;
  if (fs::exists(fs::path(path) / kManifest, error)) {
    checkpoint.dir_ = path;
  } else {
    ALPA_ASSIGN_OR_RETURN(const std::string latest, LatestName(path));
    if (latest.empty()) {
      return NotFound(
          "{}: no checkpoint here (neither a LATEST file nor a manifest.json); give "
          "the directory --checkpoint-dir wrote",
          path);
    }
    checkpoint.dir_ = (fs::path(path) / latest).string();
  }
  const std::string manifest_path = (fs::path(checkpoint.dir_) / kManifest).string();
  ALPA_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(manifest_path));
  ALPA_ASSIGN_OR_RETURN(checkpoint.manifest_, ParseManifest(text, manifest_path));
  return checkpoint;
}

Checkpoint::Checkpoint(Checkpoint&& other) noexcept
    : dir_(std::move(other.dir_)),
      manifest_(std::move(other.manifest_)),
      open_files_(std::exchange(other.open_files_, {})),
      bytes_read_(other.bytes_read_) {}

Checkpoint& Checkpoint::operator=(Checkpoint&& other) noexcept {
  if (this != &other) {
    for (const auto& [file, fd] : open_files_) ::close(fd);
    dir_ = std::move(other.dir_);
    manifest_ = std::move(other.manifest_);
    open_files_ = std::exchange(other.open_files_, {});
    bytes_read_ = other.bytes_read_;
  }
  return *this;
}

Checkpoint::~Checkpoint() {
  for (const auto& [file, fd] : open_files_) ::close(fd);
}

const SavedValue* Checkpoint::Find(const std::string& name) const {
  for (const SavedValue& value : manifest_.values) {
    if (value.name == name) return &value;
  }
  return nullptr;
}

Result<int> Checkpoint::FileDescriptor(const std::string& file) {
  if (auto it = open_files_.find(file); it != open_files_.end()) return it->second;
  const std::string path = (fs::path(dir_) / file).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return NotFound(
          "{}: the tile file the manifest names is missing; the checkpoint is "
          "incomplete",
          path);
    }
    return SystemError("open the tile file", path);
  }
  open_files_.emplace(file, fd);
  return fd;
}

Result<ir::Literal> Checkpoint::ReadRegion(const SavedValue& value, const TileRegion& region) {
  ir::Literal out = ir::Literal::CreateUninitialized(ir::Shape::Array(value.dtype, region.extent));
  const int64_t element_bytes = ir::DTypeByteSize(value.dtype);
  char* out_bytes = reinterpret_cast<char*>(out.data());
  for (const SavedTile& tile : value.tiles) {
    const TileRegion meet = Intersect(region, tile.region);
    if (meet.ElementCount() == 0 && !meet.extent.empty()) continue;
    ALPA_ASSIGN_OR_RETURN(const int fd, FileDescriptor(tile.file));
    const std::string path = (fs::path(dir_) / tile.file).string();
    if (meet == tile.region) {
      // The whole tile: one read, checked against its checksum.
      std::string bytes(static_cast<size_t>(tile.end - tile.begin), '\0');
      ALPA_RETURN_IF_ERROR(ReadAt(fd, bytes.data(), tile.end - tile.begin, tile.begin, path));
      bytes_read_ += tile.end - tile.begin;
      if (const uint32_t crc = Crc32(bytes); crc != tile.crc32) {
        return InvalidArgument(
            "{}: the tile of {}{} has CRC-32 {:08x}, the manifest says {:08x}; the "
            "checkpoint is corrupted",
            path, value.name,
            tile.region.offset.empty() ? std::string() : " at " + ToString(tile.region), crc,
            tile.crc32);
      }
      ForEachRun(meet, tile.region, region, [&](int64_t from, int64_t to, int64_t count) {
        std::memcpy(out_bytes + to * element_bytes, bytes.data() + from * element_bytes,
                    static_cast<size_t>(count * element_bytes));
      });
      continue;
    }
    Status status = Status::Ok();
    ForEachRun(meet, tile.region, region, [&](int64_t from, int64_t to, int64_t count) {
      if (!status.ok()) return;
      status = ReadAt(fd, out_bytes + to * element_bytes, count * element_bytes,
                      tile.begin + from * element_bytes, path);
      bytes_read_ += count * element_bytes;
    });
    ALPA_RETURN_IF_ERROR(status);
  }
  return out;
}

}  // namespace alpa::checkpoint
