#include "api/checkpointing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/manifest.h"
#include "checkpoint/tile_layout.h"
#include "spmd/mesh_groups.h"

namespace alpa::api {
namespace {

using checkpoint::SavedTile;
using checkpoint::TileRegion;

std::vector<checkpoint::ValueSignature> Signatures(const CarriedLayout& layout) {
  std::vector<checkpoint::ValueSignature> signatures;
  for (const ParallelExecutable::CarriedValue& value : layout.values) {
    signatures.push_back({value.name, value.shape.dtype(), value.shape.dims()});
  }
  return signatures;
}

// The values device `device` saves (its regions are no other device's): their indices.
std::vector<size_t> ValuesSavedBy(const CarriedLayout& layout, int64_t device) {
  std::vector<size_t> saved;
  for (size_t v = 0; v < layout.values.size(); ++v) {
    if (checkpoint::SavesRegion(layout.values[v].spec, layout.mesh_shape, device))
      saved.push_back(v);
  }
  return saved;
}

// Under MPI, an error on any rank becomes every rank's, so that none waits for the others in a
// later collective: the ranks all-gather whether they succeeded.
Status Agree(const Status& own, runtime::Communicator* communicator, std::string_view what) {
  if (communicator == nullptr) return own;
  Result<std::vector<std::vector<int64_t>>> flags =
      runtime::AllGatherLists(*communicator, {own.ok() ? 1 : 0});
  if (!flags.ok()) return flags.status().WithContext(what);
  if (!own.ok()) return own;
  for (size_t rank = 0; rank < flags->size(); ++rank) {
    if ((*flags)[rank].front() == 0) {
      return InvalidArgument("{}: rank {} failed (its own message says why)", what, rank);
    }
  }
  return Status::Ok();
}

// Why a checkpoint of `saved` does not fit `here`: the first value that differs.
std::string FirstDifference(const std::vector<checkpoint::SavedValue>& saved,
                            const std::vector<checkpoint::ValueSignature>& here) {
  for (size_t i = 0; i < std::min(saved.size(), here.size()); ++i) {
    const std::string was = fmt::format("%{} {}[{}]", saved[i].name, ir::DTypeName(saved[i].dtype),
                                        fmt::join(saved[i].dims, ","));
    const std::string is = fmt::format("%{} {}[{}]", here[i].name, ir::DTypeName(here[i].dtype),
                                       fmt::join(here[i].dims, ","));
    if (was != is) return fmt::format("its value {} is {}, this run's is {}", i, was, is);
  }
  return fmt::format("it holds {} values, this run carries {}", saved.size(), here.size());
}

}  // namespace

CarriedLayout CarriedLayoutOf(const ParallelExecutable& executable) {
  return {executable.mesh_shape(), executable.carried_values()};
}

CarriedLayout WholeValuesLayout(const std::vector<std::string>& names,
                                const std::vector<ir::Shape>& shapes) {
  CarriedLayout layout{{1}, {}};
  for (size_t i = 0; i < names.size(); ++i) {
    layout.values.push_back(
        {names[i], shapes[i], sharding::ShardingSpec::Replicated(shapes[i].rank())});
  }
  return layout;
}

Result<std::string> SaveCheckpoint(const CarriedLayout& layout, int64_t first_device,
                                   const std::vector<std::vector<ir::Literal>>& tiles,
                                   const CheckpointTarget& target,
                                   runtime::Communicator* communicator) {
  const int64_t devices = spmd::DeviceCount(layout.mesh_shape);
  const bool committer = communicator == nullptr || communicator->rank() == 0;
  ALPA_ASSIGN_OR_RETURN(checkpoint::PendingCheckpoint pending,
                        checkpoint::NextCheckpoint(target.root, target.step));
  ALPA_RETURN_IF_ERROR(Agree(committer ? checkpoint::CreatePendingDirectory(pending) : Status::Ok(),
                             communicator, "--checkpoint-dir"));
  // Each device's tiles of the values it saves.
  std::vector<std::vector<SavedTile>> saved(static_cast<size_t>(devices));
  Status written = Status::Ok();
  for (size_t held = 0; held < tiles.size() && written.ok(); ++held) {
    const int64_t device = first_device + static_cast<int64_t>(held);
    std::vector<checkpoint::DeviceTile> device_tiles;
    for (size_t v : ValuesSavedBy(layout, device)) {
      const ParallelExecutable::CarriedValue& value = layout.values[v];
      Result<TileRegion> region = checkpoint::DeviceRegion(value.shape.dims(), value.spec,
                                                           layout.mesh_shape, device, value.name);
      if (!region.ok()) {
        written = region.status();
        break;
      }
      device_tiles.push_back({value.name, *region, &tiles[held][v]});
    }
    if (device_tiles.empty() || !written.ok()) continue;
    Result<std::vector<SavedTile>> files =
        checkpoint::WriteDeviceTiles(pending, device, device_tiles);
    if (files.ok()) {
      saved[static_cast<size_t>(device)] = std::move(files).value();
    } else {
      written = files.status();
    }
  }
  ALPA_RETURN_IF_ERROR(Agree(written, communicator, "writing the checkpoint's tiles"));
  if (communicator != nullptr) {
    // The other ranks' tiles: their byte ranges and checksums; the regions follow from the layout.
    std::vector<int64_t> own;
    for (const SavedTile& tile : saved[static_cast<size_t>(communicator->rank())]) {
      own.insert(own.end(), {tile.begin, tile.end, static_cast<int64_t>(tile.crc32)});
    }
    ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> everyone,
                          runtime::AllGatherLists(*communicator, own));
    for (int64_t device = 0; device < devices; ++device) {
      if (device == communicator->rank()) continue;
      const std::vector<int64_t>& places = everyone[static_cast<size_t>(device)];
      const std::vector<size_t> values = ValuesSavedBy(layout, device);
      for (size_t i = 0; i < values.size(); ++i) {
        const ParallelExecutable::CarriedValue& value = layout.values[values[i]];
        ALPA_ASSIGN_OR_RETURN(TileRegion region,
                              checkpoint::DeviceRegion(value.shape.dims(), value.spec,
                                                       layout.mesh_shape, device, value.name));
        saved[static_cast<size_t>(device)].push_back(
            {device, checkpoint::TileFileName(device), std::move(region), places[3 * i],
             places[3 * i + 1], static_cast<uint32_t>(places[3 * i + 2])});
      }
    }
  }
  Status committed = Status::Ok();
  if (committer) {
    checkpoint::Manifest manifest;
    manifest.model = target.model;
    manifest.fingerprint = checkpoint::StateFingerprint(target.model, Signatures(layout));
    manifest.step = target.step;
    manifest.method = target.method;
    manifest.mesh_shape = layout.mesh_shape;
    std::vector<size_t> next(static_cast<size_t>(devices), 0);  // each device's next saved tile
    for (size_t v = 0; v < layout.values.size(); ++v) {
      const ParallelExecutable::CarriedValue& value = layout.values[v];
      checkpoint::SavedValue entry{
          value.name, value.shape.dtype(), value.shape.dims(), sharding::ToString(value.spec), {}};
      for (int64_t device = 0; device < devices; ++device) {
        if (!checkpoint::SavesRegion(value.spec, layout.mesh_shape, device)) continue;
        entry.tiles.push_back(
            saved[static_cast<size_t>(device)][next[static_cast<size_t>(device)]++]);
      }
      manifest.values.push_back(std::move(entry));
    }
    committed = checkpoint::CommitCheckpoint(pending, manifest, target.keep);
  }
  ALPA_RETURN_IF_ERROR(Agree(committed, communicator, "committing the checkpoint"));
  return (std::filesystem::path(pending.root) / pending.name).string();
}

Result<RestoredState> RestoreCheckpoint(const CarriedLayout& layout, const std::string& path,
                                        const std::string& model,
                                        runtime::Communicator* communicator) {
  ALPA_ASSIGN_OR_RETURN(checkpoint::Checkpoint saved, checkpoint::Checkpoint::Open(path));
  const checkpoint::Manifest& manifest = saved.manifest();
  const std::vector<checkpoint::ValueSignature> signatures = Signatures(layout);
  const std::string fingerprint = checkpoint::StateFingerprint(model, signatures);
  if (manifest.fingerprint != fingerprint) {
    return InvalidArgument(
        "{}: a checkpoint of {} (fingerprint {}), not of this run's {} (fingerprint {}): {}; "
        "resume with the model, --dtype and --optimizer that saved it",
        saved.dir(), manifest.model, manifest.fingerprint, model, fingerprint,
        manifest.model != model ? std::string("another model")
                                : FirstDifference(manifest.values, signatures));
  }
  RestoredState restored;
  restored.dir = saved.dir();
  restored.step = manifest.step;
  restored.method = manifest.method;
  restored.mesh_shape = manifest.mesh_shape;
  const int64_t first = communicator != nullptr ? communicator->rank() : 0;
  const int64_t held = communicator != nullptr ? 1 : spmd::DeviceCount(layout.mesh_shape);
  for (int64_t device = first; device < first + held; ++device) {
    const int64_t before = saved.bytes_read();
    std::vector<ir::Literal>& device_tiles = restored.tiles.emplace_back();
    for (const ParallelExecutable::CarriedValue& value : layout.values) {
      const checkpoint::SavedValue* entry = saved.Find(value.name);
      if (entry == nullptr) {
        return InvalidArgument("{}: the manifest has no value %{}", saved.dir(), value.name);
      }
      ALPA_ASSIGN_OR_RETURN(TileRegion region,
                            checkpoint::DeviceRegion(value.shape.dims(), value.spec,
                                                     layout.mesh_shape, device, value.name));
      ALPA_ASSIGN_OR_RETURN(ir::Literal tile, saved.ReadRegion(*entry, region));
      device_tiles.push_back(std::move(tile));
    }
    restored.bytes_read.push_back(saved.bytes_read() - before);
  }
  return restored;
}

}  // namespace alpa::api
